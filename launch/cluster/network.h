#pragma once
// The emulated network, made and removed with iproute2 (ip, tc) through run_command: a bridge
// with an address (mpirun's own daemon traffic reaches the hosts through it), one network
// namespace per host with a veth pair into the bridge, and each link shaped in both directions
// with HTB (the kernel here has no netem: no added latency or loss). A host's cores are
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

// How a link of `rate` is shaped, each way: at the rate, with a bucket this small, fed with packets
// no larger than this (the GSO size of both veth ends), small packets first.
//
// A real link puts every frame on the wire at its rate, however long it was idle; a token bucket
// lets whatever fits in it after a pause leave at once, so even a bucket of one packet lets that
// packet through without its time on the wire. The error after idle is therefore
// the bucket, and the bucket can be no smaller than two packets (one keeps a link well below its
// rate: a packet held for its tokens loses the time its timer fires late). So both are made small
// against the messages training sends: packets of at most 1/8 ms of the rate (15.6 KB at 1 Gbit,
// from veth's 64 KiB; at least 4 KiB), a bucket of 1/4 ms or two packets (31 KB at 1 Gbit).
// Measured on a 2-core AMD EPYC, 1 Gbit, one TCP connection, message and 1-byte answer after 10 ms
// idle: 128 KiB in 0.96 of its time at the rate (was 0.32 with 64 KiB packets and a 1 ms bucket),
// 1 MiB 1.05 (0.95); one stream 0.94-0.96 Gbit/s of payload (0.93 before), also with both cores
// busy. tbf's peakrate, a second bucket just above the rate, caps a burst the same way but holds
// the link to 0.70 of its rate while the cores compute, as they do in training. At 10 Gbit and
// above this machine's CPU, not the bucket, is the limit (2-8 Gbit/s of one stream).
//
// Small packets first: a host's egress is one queue for everything it sends, so with one FIFO
// (tbf) the acknowledgements of what it receives — TCP's, and the answers of Open MPI's rendezvous
// protocol, which a message over the eager limit waits for — queued behind the data it sends to
// another host. A real host's default qdisc (fq_codel, as systemd sets it) serves a sparse flow
// such as those acknowledgements before the bulk, and the kernel here has neither fq_codel nor
// sfq nor prio; HTB's priorities do it by size. Measured (ring allreduce on 4 emulated half-core
// hosts at 1 Gbit, docs/cluster.md): 1 MiB in 20.5-20.9 ms with one FIFO, 15.7-15.9 with small
// packets first (12.6 at the rate); 4 MiB 73.0-74.9 ms against 58.1-58.7.
inline constexpr long kSmallPacketBytes = 256;   // IPv4 total length below which a packet goes first
inline constexpr double kSmallPacketShare = 0.05;  // the rate the small packets are sure of (they may use all)
struct LinkShaping {
  long bucket_bytes = 0;      // HTB burst and cburst of each class
  long max_packet_bytes = 0;  // gso_max_size of both ends of the host's veth
  long queue_bytes = 0;       // the bulk's queue: 20 ms at the rate and a bucket
};
LinkShaping link_shaping(const LinkRate& rate);

}  // namespace dtbench::cluster
