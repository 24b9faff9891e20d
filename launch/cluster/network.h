#pragma once
// The emulated network, made and removed with iproute2 (ip, tc) through run_command: a bridge
// with an address (mpirun's own daemon traffic reaches the hosts through it), one network
// namespace per host with a veth pair into the bridge, and each link shaped in both directions
// with tbf (the kernel here has no netem: no added latency or loss).
#include <string>
#include <vector>

#include "launch/cluster/naming.h"
#include "launch/cluster/registry.h"

namespace dtbench::cluster {

// IoError saying so unless this process has CAP_NET_ADMIN (root), which every step needs.
void require_net_admin(const std::string& what);

// Builds what `record` describes. On an error, what was made stays for remove_network to take.
void build_network(const ClusterRecord& record);
// Stops the processes still running on the hosts, then removes every namespace, veth and the
// bridge of cluster `name` with up to `hosts` hosts;
// what is already gone is skipped, so it also finishes a half-built or half-removed cluster.
void remove_network(const std::string& name, int hosts);

// Takes the host's veth down (or up again): nothing crosses its link, in either direction, and
// its peers' TCP keepalive probes go unanswered, as with a machine that no longer runs.
void set_host_link_up(const std::string& cluster, int host, bool up);

// One host as `cluster status` shows it.
struct HostStatus {
  std::string host, address, namespace_name, veth;
  bool present = false;   // its namespace exists
  std::string shaping_in;   // the qdisc on the bridge side (traffic into the host)
  std::string shaping_out;  // the qdisc inside the host (traffic out of it)
};
std::vector<HostStatus> host_status(const ClusterRecord& record);

// How a link of `rate` is shaped: tbf's arguments after "tbf", both ways. A real link puts every
// frame on the wire at its rate however long it was idle; tbf alone lets whatever fits in its
// bucket leave at the CPU's speed after a pause, which is just what training does (compute, then
// send the gradient): a 128 KiB message crossed an idle 1 Gbit link at 3.1 Gbit/s. So:
// - the bucket is 1 ms of traffic (2 ms above kPeakRateLimit) and at least two of the 64 KiB GSO
//   packets veth hands tbf (a bucket of one keeps a link well below its rate). Each time the bucket
//   runs dry tbf sleeps on a timer, which wakes about 0.13 ms late here: at 10 Gbit a 1 ms bucket
//   held a stream to 0.87 of the rate (payload), a 2 ms one let it reach 0.91 (0.95 in frames);
// - up to kPeakRateLimit, a second bucket caps the rate any burst leaves at (peakrate, 1 % above
//   the rate: tbf needs it above) and holds kPeakBucketBytes, about one GSO packet: a full one,
//   headers and all, is larger, and tbf splits it into frames. Measured on a 2-core EPYC at 1 Gbit,
//   after 10 ms idle: 128 KiB at 0.97 of the rate (3.1 without), 1 MiB at 0.92-0.96 (1.04), a
//   4 MiB stream at 0.94 (payload; frames 0.98). A message of at most 64 KiB may still leave at once.
//   Smaller peak buckets pace finer but wake tbf's timer more often, and each wake-up costs this
//   machine about 0.13 ms: a bucket of 8 KB held 1 Gbit to 0.46 of its rate, GSO off to 0.25.
// - above it, no peak bucket: its timer could not keep up (at 3 Gbit the stream fell to 0.57 of
//   the rate), and at 10 Gbit a message after idle is slower than the link anyway (128 KiB took
//   twice its time at the rate, 1 MiB 1.3 times: per-message costs of the CPU, not the bucket).
struct TbfShape {
  long burst_bytes = 0;
  double peak_bits_per_second = 0;  // 0: no peak bucket
  long peak_bucket_bytes = 0;
  std::vector<std::string> arguments() const;  // "rate" .. "latency" "20ms", as tc takes them
  std::string text;                            // the rate as given ("1gbit")
};
constexpr double kPeakRateLimit = 1.5e9;
constexpr long kPeakBucketBytes = 66000;
TbfShape tbf_shape(const LinkRate& rate);

}  // namespace dtbench::cluster
