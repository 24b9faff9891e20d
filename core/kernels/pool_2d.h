#pragma once
// Pooling over NCHW planes, without padding. Every kernel works plane by plane: P = B·C planes of
// (H, W) in, P planes of (Ho, Wo) out, Ho = (H − k) / s + 1 and Wo likewise.
#include <cstdint>

namespace dtbench {

// out: (P, Ho, Wo), written. argmax: (P, Ho, Wo), the index ih·W + iw of each window's maximum
// within its input plane (the first one on ties). inp: (P, H, W).
void maxpool2d_forward(float* out, int32_t* argmax, const float* inp, int64_t P, int64_t H,
                       int64_t W, int64_t k, int64_t s, int64_t Ho, int64_t Wo);
// dinp: (P, H, W), written: each output gradient goes to its window's maximum (summed where
// overlapping windows share one). dout, argmax: (P, Ho, Wo); k, s: the forward's window.
void maxpool2d_backward(float* dinp, const float* dout, const int32_t* argmax, int64_t P,
                        int64_t H, int64_t W, int64_t k, int64_t s, int64_t Ho, int64_t Wo);

// out: (P, Ho, Wo), written: each window's mean. inp: (P, H, W).
void avgpool2d_forward(float* out, const float* inp, int64_t P, int64_t H, int64_t W, int64_t k,
                       int64_t s, int64_t Ho, int64_t Wo);
// dinp: (P, H, W), written: each output gradient spread evenly over its window. dout: (P, Ho, Wo).
void avgpool2d_backward(float* dinp, const float* dout, int64_t P, int64_t H, int64_t W, int64_t k,
                        int64_t s, int64_t Ho, int64_t Wo);

// out: (P), written: each plane's mean. inp: (P, HW).
void global_avgpool_forward(float* out, const float* inp, int64_t P, int64_t HW);
// dinp: (P, HW), written. dout: (P).
void global_avgpool_backward(float* dinp, const float* dout, int64_t P, int64_t HW);

}  // namespace dtbench
