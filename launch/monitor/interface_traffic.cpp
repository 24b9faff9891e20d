#include "launch/monitor/interface_traffic.h"

#include <sstream>

#include "launch/monitor/proc_parsers.h"

namespace dtbench {

std::map<std::string, InterfaceBytes> parse_net_dev(std::string_view text) {
  // Two header lines, then "  eth0: rx_bytes rx_packets errs drop fifo frame compressed multicast
  // tx_bytes ...": the received bytes are the first number, the sent bytes the ninth.
  std::map<std::string, InterfaceBytes> interfaces;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    std::istringstream numbers(line.substr(colon + 1));
    uint64_t field[9] = {};
    bool whole = true;
    for (uint64_t& value : field) whole = whole && static_cast<bool>(numbers >> value);
    if (!whole || name.empty()) continue;
    interfaces[name] = {.received = field[0], .sent = field[8]};
  }
  return interfaces;
}

InterfaceTraffic::InterfaceTraffic() : start_(parse_net_dev(read_proc_text("/proc/net/dev"))) {}

nlohmann::json InterfaceTraffic::since_start() const {
  nlohmann::json traffic = nlohmann::json::object();
  for (const auto& [name, now] : parse_net_dev(read_proc_text("/proc/net/dev"))) {
    const auto before = start_.find(name);
    const InterfaceBytes base = before != start_.end() ? before->second : InterfaceBytes{};
    // A counter that went backwards belongs to an interface that was replaced: count it from zero.
    traffic[name] = {{"received_bytes", now.received >= base.received ? now.received - base.received : now.received},
                     {"sent_bytes", now.sent >= base.sent ? now.sent - base.sent : now.sent}};
  }
  return traffic;
}

}  // namespace dtbench
