#pragma once
// What a cluster's pieces are called and where they live: its name rules, its interface and
// namespace names, its subnet in 198.18.0.0/15 and the link-rate syntax. Pure functions, so the
// rules are tested without root.
#include <cstdint>
#include <string>

namespace dtbench::cluster {

constexpr int kMaxHosts = 32;       // host addresses .1 .. .32; the index fits two digits
constexpr int kSlotCount = 512;     // one /24 per cluster: 198.18.0.0/24 .. 198.19.255.0/24
constexpr size_t kMaxNameLength = 8;  // "dtv-" + name + "-" + two digits = 15, the kernel's limit

// InputError naming the value unless `name` is 1..8 characters of [a-z0-9-], starting with a
// letter or digit.
void validate_name(const std::string& name);

// Interface and namespace names (exact, so that clusters "a" and "a-1" never touch each other's).
std::string bridge_name(const std::string& cluster);                // dtb-NAME
std::string host_veth_name(const std::string& cluster, int host);   // dtv-NAME-I (bridge side)
std::string namespace_name(const std::string& cluster, int host);   // dtb-NAME-hI
std::string host_name(const std::string& cluster, int host);        // NAME-hI (its UTS host name)
std::string filler_name(const std::string& cluster, int filler);   // dtb-NAME-fI (host_cores.h's filler)
constexpr const char* kHostInterface = "eth0";                     // the veth end inside a host

// The cluster's /24 in 198.18.0.0/15 (slot 0..511): 198.18.<slot>.0/24, then 198.19.x.0/24.
std::string subnet(int slot);                    // "198.18.3.0/24"
std::string host_address(int slot, int host);    // "198.18.3.1" for host 0
std::string bridge_address(int slot);            // "198.18.3.254"

// A link rate: "none" (unshaped) or a number with kbit, mbit or gbit ("1gbit", "2.5gbit").
struct LinkRate {
  std::string text;          // as tc takes it; "none" when unshaped
  double bits_per_second = 0;  // 0 when unshaped
  bool shaped() const { return bits_per_second > 0; }
};
// InputError naming the value and the accepted forms otherwise.
LinkRate parse_link_rate(const std::string& text);

}  // namespace dtbench::cluster
