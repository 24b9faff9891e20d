#include "launch/sweep/cluster_lease.h"

#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "launch/cluster/cluster.h"

namespace dtbench {

ClusterLease::ClusterLease() : name_(fmt::format("sw{}", getpid() % 1000000)) {}

ClusterLease::~ClusterLease() {
  try {
    release();
  } catch (const std::exception& error) {
    spdlog::error("removing the sweep's cluster {}: {} (dtbench cluster down {} removes it)", name_, error.what(), name_);
  }
}

const cluster::ClusterRecord* ClusterLease::acquire(const std::optional<SweepCluster>& wanted) {
  if (!wanted) return nullptr;
  if (record_ && built_ == wanted) return &*record_;
  release();
  spdlog::info("bringing up cluster {}: {}", name_, wanted->label());
  record_ = cluster::up({.name = name_,
                         .hosts = static_cast<int>(wanted->hosts),
                         .slots_per_host = static_cast<int>(wanted->slots),
                         .link_rate = wanted->link,
                         .cores_per_host = wanted->cores_per_host,
                         .cpuset = {},
                         .dir = {},
                         .owner_pid = getpid()});
  built_ = wanted;
  return &*record_;
}

void ClusterLease::release() {
  if (!record_) return;
  const std::string name = record_->name;
  record_.reset();
  built_.reset();
  cluster::down(name);
  spdlog::info("cluster {} removed", name);
}

}  // namespace dtbench
