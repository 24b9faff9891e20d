#include "paramserver/ps_channel.h"

#include <chrono>

#include "core/util/error.h"

namespace dtbench {

PsControlChannel::PsControlChannel(ConnectionOptions shard0, std::string run_id, int rank, int world,
                                   double timeout_seconds)
    : connection_(std::move(shard0)), run_id_(std::move(run_id)), rank_(rank), world_(world),
      timeout_seconds_(timeout_seconds) {
  if (rank < 0 || rank >= world) fail_input("worker rank {} is out of range for {} workers", rank, world);
}

// The server holds each fetch until the value is there (ps.proto's FetchRequest.wait), so a waiter
// wakes the moment it is published: the workers leave a barrier together, within a call's latency.
// Waits are cut into pieces of at most kWaitPiece, so a server that went away is noticed between them.
std::string PsControlChannel::await(const std::string& name, bool erase, const std::string& what) {
  constexpr double kWaitPiece = 2.0;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited >= timeout_seconds_) {
      throw IoError(fmt::format("worker {} waited {:.0f} s for {} through parameter server {}", rank_, waited, what,
                                connection_.address()));
    }
    const double piece = std::min(kWaitPiece, timeout_seconds_ - waited);
    if (auto value = connection_.fetch(run_id_, name, erase, piece)) return std::move(*value);
  }
}

void PsControlChannel::barrier() {
  // gather's acknowledgements go out only once worker 0 holds every worker's entry: a barrier.
  gather("");
}

std::string PsControlChannel::broadcast(const std::string& text) {
  const std::string name = fmt::format("broadcast/{}", sequence_++);
  if (rank_ == 0) {
    connection_.publish(run_id_, name, text);
    return text;
  }
  return await(name, false, fmt::format("worker 0's {}", name));
}

std::vector<std::string> PsControlChannel::gather(const std::string& text) {
  const int64_t sequence = sequence_++;
  if (rank_ != 0) {
    connection_.publish(run_id_, fmt::format("gather/{}/{}", sequence, rank_), text);
    const std::string ack = fmt::format("gather/{}/ack/{}", sequence, rank_);
    await(ack, true, fmt::format("worker 0 to collect gather/{} (worker 0, or a worker whose report it waits for, is "
                                 "missing from the run)",
                                 sequence));
    return {};
  }
  std::vector<std::string> all{text};
  for (int r = 1; r < world_; ++r) {
    const std::string name = fmt::format("gather/{}/{}", sequence, r);
    all.push_back(await(name, true, fmt::format("worker {}'s {} (is worker {} still running?)", r, name, r)));
  }
  for (int r = 1; r < world_; ++r) connection_.publish(run_id_, fmt::format("gather/{}/ack/{}", sequence, r), "");
  return all;
}


}  // namespace dtbench
