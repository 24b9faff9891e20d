#pragma once
// Small control messages between the workers of one run — not gradients: the run directory's
// name and per-worker reports. Under MPI it is a communicator of its
// own; a single worker talks to itself.
#include <string>
#include <vector>

namespace dtbench {

class ControlChannel {
 public:
  virtual ~ControlChannel() = default;
  virtual int rank() const = 0;
  virtual int world() const = 0;
  // Every worker gets rank 0's `text`.
  virtual std::string broadcast(const std::string& text) = 0;
  // Rank 0 gets every worker's `text`, in rank order; the others get an empty vector.
  virtual std::vector<std::string> gather(const std::string& text) = 0;
  // Returns once every worker has called it, on every worker within about one message's latency.
  // Rank 0 learns last who arrived, so gather-then-broadcast is one; channels may do better.
  virtual void barrier() {
    gather("");
    broadcast("");
  }
};

// The channel of a run with one worker.
class SoloChannel : public ControlChannel {
 public:
  int rank() const override { return 0; }
  int world() const override { return 1; }
  std::string broadcast(const std::string& text) override { return text; }
  std::vector<std::string> gather(const std::string& text) override { return {text}; }
  void barrier() override {}
};

}  // namespace dtbench
