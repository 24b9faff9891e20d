#include "engines/pytorch/pytorch_engine.h"

#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "comm/transport_catalogue.h"
#include "core/profile/trace_writer.h"
#include "engines/pytorch/torch_worker.h"
#include "engines/pytorch/torch_worker_config.h"

namespace dtbench {

// The worker synchronises its own gradients (ddp): dtbench's side has none to.
std::string PytorchEngine::transport(const Blueprint&) const { return std::string(kLocalTransport); }

void PytorchEngine::train(EngineRun& run) const {
  const Blueprint& bp = run.bp;
  const int rank = run.channel.rank(), world = run.channel.world();
  std::string init_method;
  if (bp.transport == "ddp" && world > 1) {
    const bool every_worker_here = run.local_world == world;
    init_method = run.channel.broadcast(rank == 0 ? ddp_rendezvous(bp.comm.iface, every_worker_here) : "");
  }
  TorchWorker torch(
      torch_worker_setup(bp, run.model, run.train_data, rank, world, run.threads, init_method, run.run_dir));
  run.count_as_own(torch.pid());
  run.provenance = {{"name", "pytorch"}, {"torch", torch.ready().value("torch", "")},
                    {"profile", bp.pytorch.profile}, {"ddp_hook", bp.pytorch.ddp_hook},
                    {"settings", torch.ready().value("settings", "")}};
  if (world > 1) run.channel.barrier();
  run.training_started();
  const RunClock clock{std::chrono::steady_clock::now(),
                       std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()};
  std::optional<TraceWriter> trace;
  if (bp.trace_steps > 0) {
    trace.emplace(run.run_dir / fmt::format("trace-{}.json", rank),
                  TraceOptions{.rank = rank, .steps_per_epoch = bp.trace_steps}, clock.start);
  }
  for (int64_t e = 0; e < torch.epochs(); ++e) run.epoch_done(torch.run_epoch(clock, trace ? &*trace : nullptr));
  if (trace) trace->finish();
  run.provenance["weights_checksum"] = torch.finish();
}

// Its settings line names the profile.
std::string PytorchEngine::provenance_line(const nlohmann::json& provenance) const {
  return fmt::format("engine pytorch {} [{}]", provenance.value("torch", ""), provenance.value("settings", ""));
}

}  // namespace dtbench
