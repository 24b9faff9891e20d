#include "launch/bench/interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace dtbench {

std::vector<HostInterface> host_interfaces() {
  std::vector<HostInterface> found;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return found;
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    auto it = std::find_if(found.begin(), found.end(), [&](const HostInterface& i) { return i.name == a->ifa_name; });
    if (it == found.end()) it = found.insert(found.end(), HostInterface{a->ifa_name, {}});
    if (a->ifa_addr != nullptr && a->ifa_addr->sa_family == AF_INET) {
      it->ipv4.push_back(ntohl(reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr));
    }
  }
  freeifaddrs(list);
  return found;
}

namespace {

// True if `entry` (a name, or a.b.c.d/len) matches one of the interfaces; a malformed subnet matches none.
bool matches(const std::string& entry, const std::vector<HostInterface>& interfaces) {
  const size_t slash = entry.find('/');
  if (slash == std::string::npos) {
    return std::any_of(interfaces.begin(), interfaces.end(), [&](const HostInterface& i) { return i.name == entry; });
  }
  in_addr network{};
  int length = -1;
  try {
    length = std::stoi(entry.substr(slash + 1));
  } catch (const std::exception&) {
    return false;
  }
  if (inet_pton(AF_INET, entry.substr(0, slash).c_str(), &network) != 1 || length < 0 || length > 32) return false;
  const unsigned mask = length == 0 ? 0u : ~0u << (32 - length);
  const unsigned net = ntohl(network.s_addr) & mask;
  for (const auto& i : interfaces) {
    for (const unsigned address : i.ipv4) {
      if ((address & mask) == net) return true;
    }
  }
  return false;
}

}  // namespace

std::string interface_problem(const std::string& spec, const std::vector<HostInterface>& interfaces) {
  std::vector<std::string> missing;
  std::stringstream entries(spec);
  for (std::string entry; std::getline(entries, entry, ',');) {
    if (!entry.empty() && !matches(entry, interfaces)) missing.push_back(entry);
  }
  if (missing.empty()) return "";
  std::string names;
  for (const auto& i : interfaces) names += (names.empty() ? "" : ", ") + i.name;
  return fmt::format("--iface: no interface {} on this host (it has: {})", fmt::join(missing, ", "), names);
}

}  // namespace dtbench
