#pragma once
// The emulated cluster a sweep's runs need (launch.cluster in plan.h): brought up before the first
// run that needs it, rebuilt when a configuration asks for other hosts or another link, and
// removed when the lease ends — after the last run, on a stop request and on a failure alike. The
// cluster is owned by the sweep's process, so if the sweep is killed outright the next `dtbench
// cluster` command removes it.
#include <optional>
#include <string>

#include "launch/cluster/registry.h"
#include "launch/sweep/plan.h"

namespace dtbench {

class ClusterLease {
 public:
  ClusterLease();  // names the cluster after this process: parallel sweeps never share one
  ~ClusterLease();
  ClusterLease(const ClusterLease&) = delete;
  ClusterLease& operator=(const ClusterLease&) = delete;

  // The cluster for `wanted` (nullptr when the configuration needs none, which leaves the current
  // one standing for a later configuration).
  const cluster::ClusterRecord* acquire(const std::optional<SweepCluster>& wanted);
  // Removes the cluster now, if there is one.
  void release();

 private:
  std::string name_;
  std::optional<SweepCluster> built_;
  std::optional<cluster::ClusterRecord> record_;
};

}  // namespace dtbench
