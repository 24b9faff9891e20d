#pragma once
// im2col / col2im: the patch unrolling that turns a convolution into one matrix product
// (Chellapilla et al. 2006). For each sample, column p = oh·Wo + ow of the unrolled matrix holds
// the k·k·C input values that output pixel p sees, ordered like a weight row (c, ki, kj), so
// out (Cout, Ho·Wo) = weight (Cout, C·k·k) · col (C·k·k, Ho·Wo).
#include <cstdint>

namespace dtbench {

// Sizes of a 2-D convolution over NCHW tensors. The im2col kernels read only the input side
// (in_channels, height, width, kernel, stride, padding, out_*); the convolution kernels read all.
struct ConvSizes {
  int64_t batch = 0;         // B
  int64_t in_channels = 0;   // C
  int64_t height = 0;        // H
  int64_t width = 0;         // W
  int64_t out_channels = 0;  // Cout
  int64_t kernel = 1;        // k (square)
  int64_t stride = 1;        // s
  int64_t padding = 0;       // pad, zeros on every side
  int64_t out_height = 0;    // Ho = (H + 2·pad − k) / s + 1
  int64_t out_width = 0;     // Wo = (W + 2·pad − k) / s + 1

  int64_t patch_count() const { return in_channels * kernel * kernel; }  // C·k·k
  int64_t out_plane() const { return out_height * out_width; }           // Ho·Wo
  int64_t in_plane() const { return height * width; }                    // H·W
};

// Unrolls one sample. col: (C·k·k) rows, row r starting at col + r·col_stride, of which the first
// Ho·Wo floats are written (zeros where the window lies in the padding). inp: (C, H, W).
// col_stride >= Ho·Wo lets several samples share one matrix side by side.
void im2col(float* col, const float* inp, const ConvSizes& sizes, int64_t col_stride);

// The adjoint of im2col: each input element gets the sum of the col entries copied from it
// (entries that came from the padding are dropped). dinp: (C, H, W), written (not accumulated).
// col: as for im2col.
void col2im(float* dinp, const float* col, const ConvSizes& sizes, int64_t col_stride);

}  // namespace dtbench
