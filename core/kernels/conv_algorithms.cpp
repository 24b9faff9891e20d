#include "core/kernels/conv_algorithms.h"

#include <array>

#include "core/kernels/conv_direct.h"
#include "core/kernels/conv_gemm.h"
#include "core/kernels/conv_lanes.h"
#include "core/kernels/conv_winograd.h"

namespace dtbench {

namespace {

constexpr std::array kAlgorithms{ConvAlgorithm::gemm,  ConvAlgorithm::winograd, ConvAlgorithm::winograd4,
                                 ConvAlgorithm::lanes, ConvAlgorithm::lanes16,  ConvAlgorithm::direct};

}  // namespace

std::span<const ConvAlgorithm> conv_algorithms() { return kAlgorithms; }

std::string_view conv_algorithm_name(ConvAlgorithm algorithm) {
  switch (algorithm) {
    case ConvAlgorithm::gemm: return "gemm";
    case ConvAlgorithm::winograd: return "winograd";
    case ConvAlgorithm::winograd4: return "winograd4";
    case ConvAlgorithm::lanes: return "lanes";
    case ConvAlgorithm::lanes16: return "lanes16";
    case ConvAlgorithm::direct: return "direct";
  }
  return "?";
}

std::optional<ConvAlgorithm> conv_algorithm_named(std::string_view name) {
  for (const ConvAlgorithm algorithm : kAlgorithms) {
    if (conv_algorithm_name(algorithm) == name) return algorithm;
  }
  return std::nullopt;
}

bool conv_algorithm_runs(ConvAlgorithm algorithm, const ConvSizes& sizes) {
  switch (algorithm) {
    case ConvAlgorithm::gemm: return true;
    case ConvAlgorithm::winograd:
    case ConvAlgorithm::winograd4: return sizes.kernel == 3 && sizes.stride == 1;
    case ConvAlgorithm::lanes: return sizes.stride == 1 && sizes.kernel >= 2;
    case ConvAlgorithm::lanes16: return lanes16_runs_here() && sizes.stride == 1 && sizes.kernel >= 2;
    case ConvAlgorithm::direct: return sizes.stride == 1;
  }
  return false;
}

ConvFunctions conv_functions(ConvAlgorithm algorithm) {
  switch (algorithm) {
    case ConvAlgorithm::winograd: return {conv2d_winograd_forward, conv2d_winograd_backward};
    case ConvAlgorithm::winograd4: return {conv2d_winograd4_forward, conv2d_winograd4_backward};
    case ConvAlgorithm::lanes: return {conv2d_lanes_forward, conv2d_lanes_backward};
    case ConvAlgorithm::lanes16: return {conv2d_lanes16_forward, conv2d_lanes16_backward};
    case ConvAlgorithm::direct: return {conv2d_direct_forward, conv2d_direct_backward};
    case ConvAlgorithm::gemm: break;
  }
  return {conv2d_forward, conv2d_backward};
}

ConvAlgorithm rule_choice(const ConvSizes& sizes) {
  if (conv2d_winograd_applies(sizes)) return ConvAlgorithm::winograd;
  if (conv2d_lanes_applies(sizes)) return ConvAlgorithm::lanes;
  if (conv2d_direct_applies(sizes)) return ConvAlgorithm::direct;
  return ConvAlgorithm::gemm;
}

}  // namespace dtbench
