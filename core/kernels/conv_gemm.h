#pragma once
// 2-D convolution over NCHW tensors as im2col + sgemm, for a batch at once.
//
// Samples are processed in groups of G. A group's patches are unrolled side by side into one
// column matrix col (C·k·k, G·Ho·Wo), so each group costs one sgemm whose N dimension is
// G·Ho·Wo: deep layers with small planes (ResNet's 4x4) still get wide, efficient products,
// while large planes (G = 1) write the product straight into the output. G is bounded so that
// col stays within a fixed budget; col lives in one grow-only workspace per thread that every
// convolution shares (forward and backward both unroll again rather than keep it).
//
//   forward, per group:  out_g (Cout, G·P)  = weight (Cout, K) · col (K, G·P)
//   backward, per group: dweight (Cout, K) += dout_g (Cout, G·P) · col^T
//                        dcol (K, G·P)      = weight^T · dout_g,  then col2im into dinp
// with K = C·k·k and P = Ho·Wo. A 1x1, stride-1, unpadded convolution needs no unrolling when
// G = 1: the input plane is already its column matrix.
#include <cstdint>

#include "core/kernels/im2col.h"

namespace dtbench {

// out: (B, Cout, Ho, Wo), written. inp: (B, C, H, W). weight: (Cout, C, k, k).
// bias: (Cout), or nullptr for none.
void conv2d_forward(float* out, const float* inp, const float* weight, const float* bias,
                    const ConvSizes& sizes);

// Writes (does not accumulate) dweight (Cout, C, k, k), dbias (Cout) and dinp (B, C, H, W), each
// unless nullptr: the first layer's input needs no gradient, and the input gradient alone (no
// dweight) skips the unrolling and the weight product, so each pass can be timed on its own.
// dout: (B, Cout, Ho, Wo); inp and weight as in the forward pass.
void conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, const ConvSizes& sizes);

// dbias (Cout) = dout (B, Cout, Ho, Wo) summed over the batch and the plane; written.
void conv2d_bias_gradient(float* dbias, const float* dout, const ConvSizes& sizes);

// How many samples one sgemm covers for these sizes (the G above).
int64_t conv2d_group_size(const ConvSizes& sizes);

// Bytes this thread's shared convolution workspace holds now.
int64_t conv2d_workspace_bytes();

}  // namespace dtbench
