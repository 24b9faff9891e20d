#pragma once
// The ways dtbench can compute a convolution on the CPU, each a forward and a backward function
// with conv_gemm.h's conventions, so that a layer may take any that can run its shape — and the
// forward of one with the backward of another (they share layouts and write, never accumulate).
//
//   gemm      im2col + sgemm (conv_gemm.h): any shape; OpenBLAS's kernels for the CPU at hand
//   winograd  F(2x2, 3x3) (conv_winograd.h): 3x3, stride 1
//   winograd4 F(4x4, 3x3) (conv_winograd.h): 3x3, stride 1; fewer products, larger transforms
//   lanes     eight samples in the vector lanes (conv_lanes.h): stride 1, filters of 2x2 or more
//   lanes16   sixteen samples in AVX-512's lanes (conv_lanes.h): as lanes, on CPUs with AVX-512F
//   direct    wide-row direct loops (conv_direct.h): stride 1
//
// Which is fastest depends on the shape, the batch, the threads and the CPU: `rule_choice` is the
// fixed choice tuned on one machine (AMD EPYC); conv_tuning.h measures instead.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/kernels/im2col.h"

namespace dtbench {

enum class ConvAlgorithm { gemm, winograd, winograd4, lanes, lanes16, direct };

struct ConvFunctions {
  void (*forward)(float* out, const float* inp, const float* weight, const float* bias, const ConvSizes& sizes);
  void (*backward)(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                   const float* weight, const ConvSizes& sizes);
};

// Every algorithm, gemm (the reference) first.
std::span<const ConvAlgorithm> conv_algorithms();

std::string_view conv_algorithm_name(ConvAlgorithm algorithm);
// The algorithm called `name`, or nullopt.
std::optional<ConvAlgorithm> conv_algorithm_named(std::string_view name);

// Whether `algorithm` computes convolutions of these sizes at all, on this CPU (not whether it is
// fast there).
bool conv_algorithm_runs(ConvAlgorithm algorithm, const ConvSizes& sizes);

ConvFunctions conv_functions(ConvAlgorithm algorithm);

// The fixed rules (each measured against the others on the models' layers, on a 2-core AMD EPYC):
// Winograd for 3x3 stride-1 layers with 16 or more input channels, eight samples in the vector
// lanes for small planes with a few dozen channel pairs, direct loops for few channels, im2col +
// sgemm for the rest.
ConvAlgorithm rule_choice(const ConvSizes& sizes);

}  // namespace dtbench
