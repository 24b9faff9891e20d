#pragma once
// The base every transport shares. finish_step is public and non-virtual: it times the two halves
// of the end of a step — synchronising (the transport's own business) and updating the weights —
// so that timing lives in one place and every transport is measured the same way (after ps-lite's
// Van::Send / SendMsg split). For a model on a device it also copies the arena between device and
// host around a transport that works on the host, timed as the d2h and h2d parts of comm; start
// and stop do the same around the transport's own begin and end (initial weights broadcast or
// pulled on the host go to the device; the final weights come to the host for the checksum).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "core/optim/optimizer.h"
#include "core/profile/clock_alignment.h"
#include "core/train/gradient_sync.h"

namespace dtbench {

class Transport : public GradientSync {
 public:
  void start(Model& model) final;
  SyncTimes finish_step(Model& model, int64_t step) final;
  void stop(Model& model) final;
  // What the transport wants in the report: its settings and end-of-run checks.
  virtual nlohmann::json summary() const { return nlohmann::json::object(); }
  // After start(): this worker's steady clock against the clock every worker of the run measured
  // itself against, so their timelines can be merged. None for a transport that measured nothing.
  virtual std::optional<ClockAlignment> clock_alignment() const { return std::nullopt; }
  // The run is ending, failed, for `reason`: tell whatever outlives this worker (parameter servers)
  // at once, so that it ends too instead of waiting out its timeouts. Best effort, bounded in
  // time, never throws: the failure is already on its way to the user.
  virtual void abandon(const std::string& /*reason*/) noexcept {}

 protected:
  // GradientSync::start and stop, the transport's own part: the arena's values are on the host
  // when either runs (and go to the device after begin, for a transport that works on the host).
  virtual void begin(Model& model) = 0;
  virtual void end(Model& model) = 0;
  // Make the arena's gradients the ones to apply (average across workers, or push and pull).
  // Fills what only it knows: hidden (communication overlapped with backward), wait, push, pull and
  // bytes. comm and update are timed here; comm_total and transfer follow from them.
  virtual void synchronize(Model& model, int64_t step, SyncTimes& times) = 0;
  // Turn the synchronised gradients into the next weights.
  virtual void update(Model& model, int64_t step) = 0;
  // Whether synchronize() reads and writes the arena on the host (every transport but one that
  // reduces on the device itself, as nccl does).
  virtual bool synchronizes_on_host() const { return true; }
  // What synchronize() reads on the host that finish_step copies there first: the gradients, less
  // what the transport copied itself as backward made them (AllreduceTransport's buckets).
  virtual std::span<float> read_by_synchronize(Model& model) { return model.arena().grads(); }
  // What synchronize() leaves new on the host for the device: the averaged gradients, which the
  // update reads; parameter servers, which update on the servers, write the pulled weights.
  virtual std::span<float> written_by_synchronize(Model& model) { return model.arena().grads(); }
};

// FNV-1a over the bytes of the weights: equal on two workers exactly when their weights are, so
// transports can check at the end that every worker holds the same model.
uint64_t weights_checksum(std::span<const float> values);

// Shared by transports that update locally after averaging (local, ring, mpi): one optimizer over
// the whole arena.
class LocalUpdateTransport : public Transport {
 public:
  explicit LocalUpdateTransport(OptimizerConfig optimizer) : optimizer_config_(std::move(optimizer)) {}

 protected:
  void update(Model& model, int64_t step) override;
  Optimizer& optimizer(Model& model);

 private:
  OptimizerConfig optimizer_config_;
  std::unique_ptr<Optimizer> optimizer_;
};

}  // namespace dtbench
