#pragma once
// Direct 2-D convolution, stride 1, with eight samples in the vector lanes: for layers of small
// planes and few channel pairs — LeNet-5's both: 3 -> 6 on 32x32 and 6 -> 16 on 14x14, 5x5
// filters. There im2col + sgemm spends more time unrolling, packing and folding back than
// multiplying (products of 6 or 16 rows), and the one-sample direct kernel (conv_direct.h) wastes
// the columns of its wide rows (28 of 32 used, 10 of 14) and broadcasts a tap per multiply-add
// block. LeNet-5's step on CIFAR-10 (batch 64, 1 thread, 2-core AMD EPYC): 8.5 ms -> 6.3 ms.
// Same argument and result conventions as conv_gemm.h, whose path stays the reference.
//
// Eight samples at a time are interleaved, (C, H, W, 8): each float of a plane becomes a vector of
// that pixel in eight samples. Every multiply-add of the convolution is then a vector one with the
// filter tap in all lanes (spread once per call) — no pixel wasted, whatever the plane's width —
// and partial sums of a block of outputs (2 channels x 5 pixels) stay in registers across all taps:
//   forward:      y[o, oh, ow, :]    = b[o] + Σ_c,ki,kj w[o, c, ki, kj] · x[c, oh+ki, ow+kj, :]
//   input grad:   the same kernel over the output gradient padded by k−1, with the filters
//                 transposed and flipped (the "full" convolution), cropped to the input
//   filter grad:  dw[o, c, ki, kj]  += Σ_oh,ow lane_sum(dy[o, oh, ow, :] · x[c, oh+ki, ow+kj, :])
// A batch not a multiple of eight fills its last group's missing lanes with zeros. Groups are
// shared among the threads OpenBLAS is set to (each sums its own filter gradient).
#include <cstdint>

#include "core/kernels/im2col.h"

namespace dtbench {

// Whether Conv2d takes this path: stride 1, a filter of 2x2 or more, output planes of at most
// 1024 pixels and at most 128 channel pairs.
bool conv2d_lanes_applies(const ConvSizes& sizes);

// As conv2d_forward (conv_gemm.h), for any stride-1 convolution.
void conv2d_lanes_forward(float* out, const float* inp, const float* weight, const float* bias,
                          const ConvSizes& sizes);

// As conv2d_backward (conv_gemm.h), for any stride-1 convolution.
void conv2d_lanes_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                           const float* inp, const float* weight, const ConvSizes& sizes);

// Sixteen samples in the lanes of AVX-512 registers: the same kernels at twice the width, for CPUs
// that have AVX-512F (Intel Xeon since Skylake-SP, AMD EPYC since Zen 4). Which width is faster
// for a layer is measured (conv_tuning.h): a batch of 42 leaves 6 of the last group's 16 lanes
// empty, and a half-filled group costs as much as a full one.
bool lanes16_runs_here();  // whether this CPU has AVX-512F
// As conv2d_lanes_forward / _backward; a logic_error where lanes16_runs_here() is false.
void conv2d_lanes16_forward(float* out, const float* inp, const float* weight, const float* bias,
                            const ConvSizes& sizes);
void conv2d_lanes16_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                             const float* inp, const float* weight, const ConvSizes& sizes);

}  // namespace dtbench
