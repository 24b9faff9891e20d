#pragma once
// Which algorithm each of a model's host convolutions computes with, for a batch size: what
// autotune measured (core/tuning/conv_tuning.h), or the rules' choice where it did not run. For
// `bench step --explain`, the run's start-up line and its report.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/models/model.h"
#include "core/tuning/conv_tuning.h"

namespace dtbench {

struct LayerConvChoice {
  std::string layer;  // its path, "layer1.0.main.conv1"
  ConvSizes sizes;
  bool measured = false;  // false: the rules chose (tuning holds only the rule then)
  ConvTuning tuning;
};

// Empty for a model on a device (cuDNN chooses there) or without convolutions.
std::vector<LayerConvChoice> conv_choices(const Model& model, int64_t batch);

// "measured: forward winograd 16, gemm 3, lanes 1; backward winograd 16, gemm 4; 1 of 20 layers
// off the rules" — or "rules: ..." when nothing was measured.
std::string conv_choices_summary(const std::vector<LayerConvChoice>& choices);
// {"choice": "measured" | "rules", "summary": ..., "layers": [{layer, shape, forward, backward, rule}]}
nlohmann::json conv_choices_json(const std::vector<LayerConvChoice>& choices);

}  // namespace dtbench
