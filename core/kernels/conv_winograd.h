#pragma once
// 3x3 stride-1 convolution over NCHW tensors by Winograd's F(2x2, 3x3) (winograd_tiles.h): the
// 36 multiplies of a 2x2 output tile per channel pair become 16, each of the 16 tile positions one
// sgemm over a group of samples; or by F(4x4, 3x3) (winograd4_tiles.h, `winograd4`): 144 become
// 36, in 36 sgemms a quarter as wide. The same argument and result conventions as conv_gemm.h, whose
// im2col + sgemm path stays the reference (tests compare the two); Conv2d picks this one where it
// applies.
//
//   forward, per group:  M[ξ] (Cout, T) = U[ξ] (Cout, C) · V[ξ] (C, T),  out = Aᵀ M A per tile
//   backward, per group: dM = A dout Aᵀ;  dU[ξ] += dM[ξ] · V[ξ]ᵀ;  dV[ξ] = U[ξ]ᵀ · dM[ξ]
// with U = G g Gᵀ for the filters (once per call) and V = Bᵀ d B for the input tiles, recomputed
// in backward rather than kept (a ResNet stage's V is 4x its input). Rounding differs from the
// direct sum: the transforms add up to 4 terms with weights ½ and 1, so errors grow by a small
// constant factor, not with the channel count.
#include <cstdint>

#include "core/kernels/im2col.h"

namespace dtbench {

// Whether Conv2d takes the Winograd path for this convolution: 3x3, stride 1, and enough input
// channels to be faster than im2col + sgemm. The functions below compute any 3x3 stride-1
// convolution.
bool conv2d_winograd_applies(const ConvSizes& sizes);

// As conv2d_forward (conv_gemm.h), for sizes where conv2d_winograd_applies.
void conv2d_winograd_forward(float* out, const float* inp, const float* weight, const float* bias,
                             const ConvSizes& sizes);

// As conv2d_backward (conv_gemm.h), for sizes where conv2d_winograd_applies.
void conv2d_winograd_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                              const float* inp, const float* weight, const ConvSizes& sizes);

// How many samples one group (one sgemm per tile position) covers for these sizes.
int64_t conv2d_winograd_group_size(const ConvSizes& sizes);

// The same three by F(4x4, 3x3), for any 3x3 stride-1 convolution.
void conv2d_winograd4_forward(float* out, const float* inp, const float* weight, const float* bias,
                              const ConvSizes& sizes);
void conv2d_winograd4_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                               const float* inp, const float* weight, const ConvSizes& sizes);
int64_t conv2d_winograd4_group_size(const ConvSizes& sizes);

// Bytes this thread's Winograd workspace holds now.
int64_t conv2d_winograd_workspace_bytes();

}  // namespace dtbench
