#include "launch/cluster/network.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/util/error.h"
#include "launch/cluster/command_runner.h"

namespace dtbench::cluster {

namespace {

constexpr int kNetAdminBit = 12;  // CAP_NET_ADMIN in /proc/self/status CapEff

bool has_net_admin() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    const unsigned long long caps = std::stoull(line.substr(7), nullptr, 16);
    return (caps >> kNetAdminBit) & 1ULL;
  }
  return false;
}

void ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  check_command(argv);
}

// `tool args...` (ip or tc) acting inside namespace `ns`, or in this one when `ns` is empty.
std::vector<std::string> in_namespace(const std::string& tool, const std::string& ns,
                                      std::initializer_list<std::string> args) {
  std::vector<std::string> argv = {tool};
  if (!ns.empty()) argv.insert(argv.end(), {"-n", ns});
  argv.insert(argv.end(), args);
  return argv;
}

// Shapes the egress of `dev` (inside namespace `ns` when given) to `rate`, as link_shaping says: an
// HTB class at the rate over two, small packets first (network.h says why), each as bursty as the
// one bucket allows; the bulk's queue holds what tbf's "latency 20ms" held.
void shape(const std::string& ns, const std::string& dev, const LinkRate& rate) {
  const LinkShaping shaping = link_shaping(rate);
  const std::string packet = std::to_string(shaping.max_packet_bytes);
  check_command(in_namespace("ip", ns, {"link", "set", "dev", dev, "gso_max_size", packet}));
  const auto tc = [&](std::initializer_list<std::string> args) { check_command(in_namespace("tc", ns, args)); };
  const std::string bucket = std::to_string(shaping.bucket_bytes), quantum = packet;  // a turn: one packet
  const auto bits = [](double bits_per_second) { return fmt::format("{}bit", std::llround(bits_per_second)); };
  const std::string small_rate = bits(rate.bits_per_second * kSmallPacketShare);
  const std::string bulk_rate = bits(rate.bits_per_second * (1 - kSmallPacketShare));
  tc({"qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "20"});
  tc({"class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", rate.text, "ceil", rate.text,
      "burst", bucket, "cburst", bucket, "quantum", quantum});
  tc({"class", "add", "dev", dev, "parent", "1:1", "classid", "1:10", "htb", "rate", small_rate, "ceil", rate.text,
      "burst", bucket, "cburst", bucket, "prio", "0", "quantum", quantum});
  tc({"class", "add", "dev", dev, "parent", "1:1", "classid", "1:20", "htb", "rate", bulk_rate, "ceil", rate.text,
      "burst", bucket, "cburst", bucket, "prio", "1", "quantum", quantum});
  tc({"qdisc", "add", "dev", dev, "parent", "1:20", "bfifo", "limit", std::to_string(shaping.queue_bytes)});
  // IPv4 packets whose total length is below 256 (the 16 bits at offset 2 of the header) are small.
  static_assert(kSmallPacketBytes == 256, "the u32 match below tests the length's high byte");
  tc({"filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "u16", "0x0000",
      "0xff00", "at", "2", "flowid", "1:10"});
}

// TCP buffers large enough for the shaped rate; sysctls under net.ipv4.tcp_* are per namespace.
void tune_tcp(const std::string& ns) {
  for (const char* setting : {"net.ipv4.tcp_rmem=4096 131072 33554432", "net.ipv4.tcp_wmem=4096 65536 33554432"}) {
    check_command({"ip", "netns", "exec", ns, "sysctl", "-q", "-w", setting});
  }
}

void build_host(const ClusterRecord& r, int host, const LinkRate& rate) {
  const std::string ns = namespace_name(r.name, host), veth = host_veth_name(r.name, host);
  ip({"netns", "add", ns});
  ip({"link", "add", veth, "type", "veth", "peer", "name", kHostInterface, "netns", ns});
  ip({"link", "set", veth, "master", bridge_name(r.name), "up"});
  ip({"-n", ns, "addr", "add", host_address(r.slot, host) + "/24", "dev", kHostInterface});
  ip({"-n", ns, "link", "set", kHostInterface, "up"});
  ip({"-n", ns, "link", "set", "lo", "up"});
  tune_tcp(ns);
  if (rate.shaped()) {
    shape("", veth, rate);             // into the host
    shape(ns, kHostInterface, rate);   // out of the host
  }
}

bool link_exists(const std::string& dev) { return std::filesystem::exists("/sys/class/net/" + dev); }

// What shapes the egress of `dev`, as `cluster status` shows it: the rate and bucket of the
// shaping class (or the root qdisc, unshaped), whether small packets go first, and the largest
// packet the device takes, e.g. "htb rate 1Gbit ceil 1Gbit burst 31125b cburst 31125b, packets
// under 256 B first, packets <= 15625 B".
std::string shaping(const std::string& ns, const std::string& dev) {
  const auto tc = [&](std::initializer_list<std::string> args) {
    const CommandResult result = run_command(in_namespace("tc", ns, args));
    return result.exit_code == 0 ? result.output : std::string("?");
  };
  std::string text = tc({"class", "show", "dev", dev, "classid", "1:1"});
  if (text.empty() || text == "?") {
    // "qdisc noqueue 0: root refcnt 2" -> "noqueue"
    const std::regex root_qdisc("qdisc (\\S+) \\S+ root (refcnt \\d+ )?");
    text = std::regex_replace(tc({"qdisc", "show", "dev", dev, "root"}), root_qdisc, "$1 ");
  } else {
    // "class htb 1:1 root rate 1Gbit ceil 1Gbit burst 31125b cburst 31125b" -> "htb rate 1Gbit ..."
    text = std::regex_replace(text, std::regex("class (\\S+) \\S+ root "), "$1 ");
  }
  text.erase(std::remove(text.begin(), text.end(), '\n'), text.end());
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (tc({"filter", "show", "dev", dev}).find("flowid 1:10") != std::string::npos) {
    text += fmt::format(", packets under {} B first", kSmallPacketBytes);
  }
  std::smatch gso;
  const std::string link = run_command(in_namespace("ip", ns, {"-d", "link", "show", "dev", dev})).output;
  if (std::regex_search(link, gso, std::regex("gso_max_size (\\d+)"))) text += ", packets <= " + gso[1].str() + " B";
  return text;
}

// The processes still running in namespace `ns` (started with cluster exec or by mpirun).
std::vector<pid_t> processes_in(const std::string& ns) {
  std::vector<pid_t> pids;
  std::istringstream lines(run_command({"ip", "netns", "pids", ns}).output);
  for (pid_t pid = 0; lines >> pid;) pids.push_back(pid);
  return pids;
}

// A deleted namespace lives on while a process holds it: end them (SIGTERM, SIGKILL after 2 s).
void stop_processes_in(const std::string& ns) {
  std::vector<pid_t> pids = processes_in(ns);
  if (pids.empty()) return;
  spdlog::info("stopping {} process(es) still running in {}", pids.size(), ns);
  for (const pid_t pid : pids) kill(pid, SIGTERM);
  for (int tries = 0; tries < 40 && !(pids = processes_in(ns)).empty(); ++tries) usleep(50000);
  for (const pid_t pid : pids) kill(pid, SIGKILL);
}

// A port joins the bridge forwarding only once the kernel has seen its carrier come up (linkwatch,
// run later from a work queue): mpirun started at once could find a host's first connection back to
// it dropped ("unable to complete a TCP connection", seen once on a busy machine). Waits up to 3 s.
void wait_for_forwarding(const ClusterRecord& r) {
  constexpr const char* kForwarding = "3";  // BR_STATE_FORWARDING in brport/state
  for (int tries = 0; tries < 300; ++tries) {
    bool all = true;
    for (int host = 0; host < r.hosts && all; ++host) {
      const std::string port = "/sys/class/net/" + host_veth_name(r.name, host);
      std::ifstream state(port + "/brport/state"), operstate(port + "/operstate");
      std::string forwarding, up;
      state >> forwarding;
      operstate >> up;
      all = forwarding == kForwarding && up == "up";
    }
    if (all) return;
    usleep(10000);
  }
  spdlog::warn("cluster {}: not every host's link was forwarding after 3 s", r.name);
}

}  // namespace

void require_net_admin(const std::string& what) {
  if (!has_net_admin()) {
    throw IoError(fmt::format("{} needs root (CAP_NET_ADMIN) to make network namespaces, veth pairs and a bridge; "
                              "run it as root or with sudo", what));
  }
}

LinkShaping link_shaping(const LinkRate& rate) {
  constexpr long kSmallestPacket = 4096, kVethPacket = 65536;
  constexpr double kQueueSeconds = 0.020;  // tbf's "latency 20ms": the longest a packet may wait
  const double bytes_per_ms = rate.bits_per_second / 8 / 1000;
  const long packet = std::clamp(static_cast<long>(bytes_per_ms / 8), kSmallestPacket, kVethPacket);
  const long bucket = std::max(2 * packet, static_cast<long>(bytes_per_ms / 4));
  return {.bucket_bytes = bucket,
          .max_packet_bytes = packet,
          .queue_bytes = static_cast<long>(bytes_per_ms * 1000 * kQueueSeconds) + bucket};
}

void build_network(const ClusterRecord& r) {
  const LinkRate rate = parse_link_rate(r.link_rate);
  const std::string bridge = bridge_name(r.name);
  ip({"link", "add", bridge, "type", "bridge"});
  ip({"addr", "add", bridge_address(r.slot) + "/24", "dev", bridge});
  ip({"link", "set", bridge, "up"});
  for (int host = 0; host < r.hosts; ++host) build_host(r, host, rate);
  wait_for_forwarding(r);
}

void remove_network(const std::string& name, int hosts) {
  for (int host = 0; host < std::max(hosts, kMaxHosts); ++host) {
    const std::string ns = namespace_name(name, host), veth = host_veth_name(name, host);
    // The veth first: deleting it removes both ends at once, whereas a deleted namespace takes its
    // end (and so the bridge's) with it only later, in the kernel's own time.
    if (std::filesystem::exists("/run/netns/" + ns)) stop_processes_in(ns);
    if (link_exists(veth)) ip({"link", "del", veth});
    if (std::filesystem::exists("/run/netns/" + ns)) ip({"netns", "del", ns});
  }
  if (link_exists(bridge_name(name))) ip({"link", "del", bridge_name(name)});
}

void set_host_link_up(const std::string& cluster, int host, bool up) {
  ip({"link", "set", host_veth_name(cluster, host), up ? "up" : "down"});
}

std::vector<HostStatus> host_status(const ClusterRecord& r) {
  std::vector<HostStatus> hosts;
  for (int host = 0; host < r.hosts; ++host) {
    HostStatus s;
    s.host = host_name(r.name, host);
    s.address = host_address(r.slot, host);
    s.namespace_name = namespace_name(r.name, host);
    s.veth = host_veth_name(r.name, host);
    s.present = std::filesystem::exists("/run/netns/" + s.namespace_name);
    if (s.present && link_exists(s.veth)) {
      s.shaping_in = shaping("", s.veth);
      s.shaping_out = shaping(s.namespace_name, kHostInterface);
    }
    hosts.push_back(std::move(s));
  }
  return hosts;
}

}  // namespace dtbench::cluster
