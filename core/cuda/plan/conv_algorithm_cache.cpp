#include "core/cuda/plan/conv_algorithm_cache.h"

#include <fmt/format.h>

namespace dtbench::cuda_plan {

namespace {

const char* direction_name(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::Forward:
      return "forward";
    case ConvDirection::BackwardData:
      return "data-gradient";
    case ConvDirection::BackwardFilter:
      return "filter-gradient";
  }
  return "?";
}

}  // namespace

std::vector<std::string> ConvAlgorithmCache::lines(
    const std::function<std::string(ConvDirection, int)>& algorithm_name) const {
  std::vector<std::string> out;
  for (const auto& [key, choice] : choices_) {
    const auto& [direction, s] = key;
    out.push_back(fmt::format("{} n{} c{} {}x{} -> {} k{} s{} p{}: {} (algorithm {}), workspace {} B",
                              direction_name(direction), s.batch, s.in_channels, s.height, s.width, s.out_channels,
                              s.kernel, s.stride, s.padding, algorithm_name(direction, choice.algorithm),
                              choice.algorithm, choice.workspace_bytes));
  }
  return out;
}

}  // namespace dtbench::cuda_plan
