#pragma once
// Element-wise activation kernels over n values. Every output may alias its input.
#include <cstdint>

#include "core/util/rng.h"

namespace dtbench::kernels {

// out (n) = max(inp, 0); NaN propagates.
void relu_forward(float* out, const float* inp, int64_t n);
// dinp (n) = dout where out > 0, else 0. out (n) is the forward's output.
void relu_backward(float* dinp, const float* dout, const float* out, int64_t n);

// out (n) = tanh(inp).
void tanh_forward(float* out, const float* inp, int64_t n);
// dinp (n) = dout · (1 − out²). out (n) is the forward's output.
void tanh_backward(float* dinp, const float* dout, const float* out, int64_t n);

// out (n) = 1 / (1 + exp(−inp)); exp overflows to infinity for very negative inp, giving 0.
void sigmoid_forward(float* out, const float* inp, int64_t n);
// dinp (n) = dout · out · (1 − out). out (n) is the forward's output.
void sigmoid_backward(float* dinp, const float* dout, const float* out, int64_t n);

// out (n) = inp · mask; dropout's backward (its mask and forward: core/cuda/bodies/dropout.h).
void apply_mask(float* out, const float* inp, const float* mask, int64_t n);

}  // namespace dtbench::kernels
