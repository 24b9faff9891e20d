#pragma once
// A fully connected layer, y = x W^T + b, as single sgemm calls (row-major throughout).
#include <cstdint>

namespace dtbench {

// out: (B, OC), written. inp: (B, C). weight: (OC, C). bias: (OC), or nullptr for none.
void linear_forward(float* out, const float* inp, const float* weight, const float* bias,
                    int64_t B, int64_t C, int64_t OC);

// Writes (does not accumulate) dweight (OC, C), dbias (OC) unless nullptr, and dinp (B, C)
// unless nullptr. dout: (B, OC); inp and weight as in the forward pass.
void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                     const float* inp, const float* weight, int64_t B, int64_t C, int64_t OC);

}  // namespace dtbench
