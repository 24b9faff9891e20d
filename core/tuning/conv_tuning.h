#pragma once
// Each convolution's algorithm chosen by measuring, once per shape (as cuDNN's find does on a
// GPU): every algorithm that can run the shape (conv_algorithms.h) is timed at the layer's batch
// and the threads set now, forward and backward apart, and the fastest of each kept. A fixed rule
// tuned on one CPU kind picks badly on another (OpenBLAS's sgemm runs AVX-512 kernels on an
// Intel Xeon while dtbench's own kernels are 8 wide), so the choice is measured on the machine
// that trains. Choices are kept per machine (tuning_cache.h) and shown by `bench step --explain`.
#include <cstdint>
#include <string>
#include <vector>

#include "core/kernels/conv_algorithms.h"

namespace dtbench {

// The rules' algorithm is kept unless another is faster than it by more than this share: within
// it the two are a timing's noise apart, and the rules' choice is the one every earlier figure was
// made with. At 3 %, on a 2-core Intel Xeon running a second test beside it, ResNet-18's 512-channel
// layer took gemm's forward for 8 % measured, and the pair then ran 26 % slower than the rules'
// (gemm's im2col and 9 MiB of filters lose more than Winograd to a neighbour's memory traffic).
inline constexpr double kKeepRuleWithin = 0.10;

// One algorithm's times for a shape, in milliseconds: the least of the rounds it was timed in (a
// slow one only in the first; infinity in an entry the cache holds without a time).
struct ConvTrial {
  ConvAlgorithm algorithm = ConvAlgorithm::gemm;
  double forward_ms = 0.0;
  double backward_ms = 0.0;
};

struct ConvTuning {
  ConvAlgorithm forward = ConvAlgorithm::gemm;
  ConvAlgorithm backward = ConvAlgorithm::gemm;
  ConvAlgorithm rule = ConvAlgorithm::gemm;  // what the fixed rules would have taken
  std::vector<ConvTrial> trials;             // as measured (also when read back from the cache)
  bool from_cache = false;
  double disturbed_share = 0.0;  // of the timings, those that lost their CPU to another process
  bool too_busy = false;         // most did: the rules' choice kept, nothing cached
};

// The backward pass computes the input gradient only when `input_grad` (a model's first layer
// needs none).
ConvTuning measure_conv(const ConvSizes& sizes, bool input_grad);
// measure_conv's result for this machine, shape and threads from the tuning cache, measured (and
// stored) when it has none.
ConvTuning tuned_conv(const ConvSizes& sizes, bool input_grad);

// "n32 c64 16x16 -> 128 k3 s1 p1", as cuDNN's choices are listed too.
std::string conv_shape_text(const ConvSizes& sizes);
// "forward winograd (rule winograd), backward gemm (rule winograd); ms gemm 3.1/6.0, winograd 2.2/6.9"
std::string conv_tuning_text(const ConvTuning& tuning);

}  // namespace dtbench
