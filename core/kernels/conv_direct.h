#pragma once
// Direct 2-D convolution, stride 1, for layers with very few channels on planes too large for the
// lane-interleaved kernel (conv_lanes.h, which now takes LeNet-5's layers), where im2col + sgemm
// spends its time unrolling and in products too thin for sgemm (M = 6).
// Same argument and result conventions as conv_gemm.h, whose path stays the reference.
//
// Every plane is handled "wide": with the input zero-padded to (Hp, Wp), output pixel (oh, ow)
// reads the window starting at oh·Wp + ow, so one output plane laid out with row stride Wp is, for
// each filter tap (ki, kj), a single contiguous multiply-add of Ho·Wp floats against the padded
// input shifted by ki·Wp + kj. The Wp − Wo extra columns per row are computed and dropped (forward)
// or held at zero (backward). Each tap is then one long vectorised loop, built for AVX2 + FMA where
// the CPU has them (a function clone chosen at load time) and plain SSE otherwise.
//   forward:       out_wide[o]   += w[o, c, ki, kj] · in_pad[c] shifted
//   filter grad:   dw[o, c, ki, kj] = Σ_samples ⟨dout_wide[o], in_pad[c] shifted⟩
//   input grad:    din_pad[c] shifted += w[o, c, ki, kj] · dout_wide[o]
// Samples are shared among the threads OpenBLAS is set to (each sums its own filter gradient).
#include <cstdint>

#include "core/kernels/im2col.h"

namespace dtbench {

// Whether Conv2d takes the direct path: stride 1 and few enough channel pairs that sgemm's
// products would be thin.
bool conv2d_direct_applies(const ConvSizes& sizes);

// As conv2d_forward (conv_gemm.h), for any stride-1 convolution.
void conv2d_direct_forward(float* out, const float* inp, const float* weight, const float* bias,
                           const ConvSizes& sizes);

// As conv2d_backward (conv_gemm.h), for any stride-1 convolution.
void conv2d_direct_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                            const float* inp, const float* weight, const ConvSizes& sizes);

}  // namespace dtbench
