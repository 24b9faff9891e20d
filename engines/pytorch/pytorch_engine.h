#pragma once
// The PyTorch engine (`engine: pytorch`): the same run, its steps trained by a PyTorch worker per
// rank (torch_worker.h), whose DistributedDataParallel synchronises the gradients (transport ddp)
// and which saves the final weights itself. dtbench's side keeps the local transport.
#include "engines/engine.h"

namespace dtbench {

class PytorchEngine : public Engine {
 public:
  std::string_view name() const override { return "pytorch"; }
  std::string transport(const Blueprint& bp) const override;
  void train(EngineRun& run) const override;
  std::string provenance_line(const nlohmann::json& provenance) const override;
  bool dtbench_saves_weights() const override { return false; }
};

}  // namespace dtbench
