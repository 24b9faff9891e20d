#pragma once
// The control channel of parameter-server workers, which may run without MPI: collectives built on
// shard 0's Publish / Fetch. Each collective call gets the next sequence number (every worker makes
// the same calls in the same order, as with MPI), publishes under a name derived from it, and
// fetches the values it needs with fetches the server holds until they are published, up to
// timeout_seconds in all.
//
// A gather ends on every worker only once worker 0 has every report: worker 0 acknowledges each
// worker's (a value only that worker fetches and erases), so a worker whose peer is missing — worker
// 0 gone, or another worker whose report never came — fails within the timeout, naming it, instead
// of finishing as if the run had gone well.
#include <memory>
#include <string>

#include "comm/control_channel.h"
#include "paramserver/ps_connection.h"

namespace dtbench {

class PsControlChannel final : public ControlChannel {
 public:
  PsControlChannel(ConnectionOptions shard0, std::string run_id, int rank, int world, double timeout_seconds);

  int rank() const override { return rank_; }
  int world() const override { return world_; }
  std::string broadcast(const std::string& text) override;
  std::vector<std::string> gather(const std::string& text) override;
  void barrier() override;

 private:
  std::string await(const std::string& name, bool erase, const std::string& what);

  PsConnection connection_;
  std::string run_id_;
  int rank_;
  int world_;
  double timeout_seconds_;
  int64_t sequence_ = 0;
};

}  // namespace dtbench
