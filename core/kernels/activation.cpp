#include "core/kernels/activation.h"

#include <algorithm>
#include <cmath>

#include "core/kernels/parallel_ranges.h"

namespace dtbench::kernels {

void relu_forward(float* out, const float* inp, int64_t n) {
  parallel_ranges(n, kMinFloatsPerThread, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) out[i] = std::max(inp[i], 0.0f);
  });
}

void relu_backward(float* dinp, const float* dout, const float* out, int64_t n) {
  parallel_ranges(n, kMinFloatsPerThread, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      const float g = dout[i];  // loaded unconditionally, so the select vectorises
      dinp[i] = out[i] > 0.0f ? g : 0.0f;
    }
  });
}

void tanh_forward(float* out, const float* inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(inp[i]);
}

void tanh_backward(float* dinp, const float* dout, const float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dinp[i] = dout[i] * (1.0f - out[i] * out[i]);
}

void sigmoid_forward(float* out, const float* inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = 1.0f / (1.0f + std::exp(-inp[i]));
}

void sigmoid_backward(float* dinp, const float* dout, const float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dinp[i] = dout[i] * out[i] * (1.0f - out[i]);
}

void apply_mask(float* out, const float* inp, const float* mask, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = inp[i] * mask[i];
}

}  // namespace dtbench::kernels
