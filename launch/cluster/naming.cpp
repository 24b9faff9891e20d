#include "launch/cluster/naming.h"

#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench::cluster {

void validate_name(const std::string& name) {
  static const std::regex pattern("[a-z0-9][a-z0-9-]*");
  if (name.empty() || name.size() > kMaxNameLength || !std::regex_match(name, pattern)) {
    fail_input("cluster name '{}': expected 1 to {} characters of a-z, 0-9 and '-', starting with a letter or digit "
               "(it becomes part of interface names, which the kernel limits to 15 characters)",
               name, kMaxNameLength);
  }
}

std::string bridge_name(const std::string& cluster) { return "dtb-" + cluster; }
std::string host_veth_name(const std::string& cluster, int host) { return fmt::format("dtv-{}-{}", cluster, host); }
std::string namespace_name(const std::string& cluster, int host) { return fmt::format("dtb-{}-h{}", cluster, host); }
std::string host_name(const std::string& cluster, int host) { return fmt::format("{}-h{}", cluster, host); }
std::string filler_name(const std::string& cluster, int filler) { return fmt::format("dtb-{}-f{}", cluster, filler); }

namespace {
std::string network_prefix(int slot) {
  if (slot < 0 || slot >= kSlotCount) throw LogicError(fmt::format("cluster slot {} outside 0..{}", slot, kSlotCount - 1));
  return fmt::format("198.{}.{}", 18 + slot / 256, slot % 256);
}
}  // namespace

std::string subnet(int slot) { return network_prefix(slot) + ".0/24"; }
std::string host_address(int slot, int host) { return fmt::format("{}.{}", network_prefix(slot), host + 1); }
std::string bridge_address(int slot) { return network_prefix(slot) + ".254"; }

LinkRate parse_link_rate(const std::string& text) {
  if (text == "none") return LinkRate{"none", 0};
  static const std::regex pattern("([0-9]+(\\.[0-9]+)?)(kbit|mbit|gbit)");
  std::smatch match;
  double value = 0;
  if (std::regex_match(text, match, pattern)) value = std::strtod(match[1].str().c_str(), nullptr);
  if (value <= 0) {
    fail_input("link rate '{}': expected 'none' or a positive number with kbit, mbit or gbit (e.g. 1gbit, 10gbit, "
               "25gbit, 500mbit)", text);
  }
  const std::string unit = match[3].str();
  const double scale = unit == "kbit" ? 1e3 : unit == "mbit" ? 1e6 : 1e9;
  return LinkRate{text, value * scale};
}

}  // namespace dtbench::cluster
