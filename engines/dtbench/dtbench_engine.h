#pragma once
// dtbench's own engine (`engine: dtbench`, the default): the Trainer of core/train runs the rank's
// steps and the blueprint's transport synchronises them.
#include "engines/engine.h"

namespace dtbench {

class DtbenchEngine : public Engine {
 public:
  std::string_view name() const override { return "dtbench"; }
  std::string transport(const Blueprint& bp) const override { return bp.transport; }
  void train(EngineRun& run) const override;
  std::string provenance_line(const nlohmann::json& provenance) const override;
  bool dtbench_saves_weights() const override { return true; }
};

}  // namespace dtbench
