#pragma once
// The emulated network, made and removed with iproute2 (ip, tc) through run_command: a bridge
// with an address (mpirun's own daemon traffic reaches the hosts through it), one network
// namespace per host with a veth pair into the bridge, and each link shaped in both directions
// with tbf (the kernel here has no netem: no added latency or loss). A host's cores are
// host_cgroups.h's.
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

// tbf's bucket for `rate`: 1 ms of traffic, and at least two of the 64 KiB GSO packets veth hands
// tbf (a bucket of one keeps a link well below its rate). A real link has no bucket: whatever fits
// in it after a pause passes at the CPU's speed, so a larger one (it was 4 ms, 500 KB at 1 Gbit)
// let LeNet-5's 0.25 MB gradient cross a 1 Gbit link in half the link's time. This one costs a
// long stream about 3 % of the rate (0.92 against 0.95 Gbit/s at 1 Gbit). A second, peak bucket
// (tbf's peakrate, 1 % above the rate, of one GSO packet) kept an idle 1 Gbit link from bursting —
// 128 KiB took 0.88-1.17 of its time at the rate instead of 0.29 — but its timer, woken late when
// the cores are busy, held the link to 0.70 of its rate while both cores computed (0.955 without
// it), as they do in training: so not used.
long tbf_burst_bytes(const LinkRate& rate);

}  // namespace dtbench::cluster
