#pragma once
// The kernels of conv_lanes.h, written once for L samples in the vector lanes (L = 8 or 16) and
// instantiated by conv_lanes.cpp inside functions built for the instruction set of each width.
// Everything here is always inlined, so that it takes that function's instruction set. Internal
// to conv_lanes.cpp.
#include <algorithm>
#include <cstdint>

#include "core/kernels/im2col.h"
#include "core/kernels/lane_vector.h"
#include "core/kernels/vec8.h"

namespace dtbench::lanes {

// Output channels and pixels of a row summed together in registers. Eight lanes (AVX2, 16
// registers): 10 partial sums, 2 filter taps and the input vector they multiply (with 12 sums GCC
// spilled; 2 x 4 and 2 x 5 measured alike). Sixteen lanes (AVX-512, 32 registers): twice the
// channels, 20 sums, 4 taps and the input.
template <int L>
constexpr int kBlockChannels = L == 16 ? 4 : 2;
constexpr int kBlockPixels = 5;

// A convolution over interleaved planes (channels, rows, cols, L): output (oh, ow) reads the input
// window at (oh + row0, ow + col0).
struct LaneConv {
  int64_t in_channels, in_rows, in_cols;
  int64_t out_channels, out_rows, out_cols;
  int64_t row0, col0;
  int64_t k;
};

// The 8x8 block r (r[i]: 8 floats of row i) transposed in place, in three rounds of two-vector
// shuffles that GCC emits as unpck, shufps and vperm2f128: r[j] then holds column j.
DTB_VEC8_INLINE void transpose8(vec8::Vec8 (&r)[8]) {
  using vec8::Index8;
  using vec8::Vec8;
  const Index8 low_pairs{0, 8, 1, 9, 4, 12, 5, 13}, high_pairs{2, 10, 3, 11, 6, 14, 7, 15};
  const Index8 low_quads{0, 1, 8, 9, 4, 5, 12, 13}, high_quads{2, 3, 10, 11, 6, 7, 14, 15};
  const Index8 low_halves{0, 1, 2, 3, 8, 9, 10, 11}, high_halves{4, 5, 6, 7, 12, 13, 14, 15};
  Vec8 t[8], q[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shuffle(r[i], r[i + 1], low_pairs);
    t[i + 1] = __builtin_shuffle(r[i], r[i + 1], high_pairs);
  }
  for (int i = 0; i < 8; i += 4) {
    q[i] = __builtin_shuffle(t[i], t[i + 2], low_quads);       // columns 0 and 4 of rows i..i+3
    q[i + 1] = __builtin_shuffle(t[i], t[i + 2], high_quads);  // 1 and 5
    q[i + 2] = __builtin_shuffle(t[i + 1], t[i + 3], low_quads);   // 2 and 6
    q[i + 3] = __builtin_shuffle(t[i + 1], t[i + 3], high_quads);  // 3 and 7
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = __builtin_shuffle(q[j], q[j + 4], low_halves);
    r[j + 4] = __builtin_shuffle(q[j], q[j + 4], high_halves);
  }
}

// An 8x8 block moved transposed: row k of the block starts at from + k·from_stride, and its column k
// lands at to + k·to_stride.
DTB_VEC8_INLINE void move_transposed8(float* to, int64_t to_stride, const float* from, int64_t from_stride) {
  vec8::Vec8 block[8];
  for (int k = 0; k < 8; ++k) block[k] = vec8::load(from + k * from_stride);
  transpose8(block);
  for (int k = 0; k < 8; ++k) vec8::store(to + k * to_stride, block[k]);
}

// dst (channels, rows, cols, L) = samples [0, count) of src (count, channels, H, W) placed at
// (pad, pad) of each plane, in their lanes; zero around them and in lanes count..L-1. Eight
// samples and eight pixels move as one 8x8 transpose, a lane group of eight at a time.
template <int L>
DTB_VEC8_INLINE void interleave(float* dst, const float* src, int64_t count, int64_t channels, int64_t H, int64_t W,
                                int64_t pad, int64_t rows, int64_t cols) {
  const int64_t sample = channels * H * W;
  if (count < L) {
    std::fill_n(dst, channels * rows * cols * L, 0.0f);
  } else {  // only the border
    for (int64_t c = 0; c < channels; ++c) {
      float* plane = dst + c * rows * cols * L;
      std::fill_n(plane, pad * cols * L, 0.0f);
      std::fill_n(plane + (pad + H) * cols * L, (rows - pad - H) * cols * L, 0.0f);
      for (int64_t h = pad; h < pad + H; ++h) {
        std::fill_n(plane + h * cols * L, pad * L, 0.0f);
        std::fill_n(plane + (h * cols + pad + W) * L, (cols - pad - W) * L, 0.0f);
      }
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t h = 0; h < H; ++h) {
      const float* row = src + (c * H + h) * W;  // sample l's at + l·sample
      float* to = dst + ((c * rows + h + pad) * cols + pad) * L;
      int64_t w = 0;
      if (count == L) {
        for (; w + 8 <= W; w += 8) {
          for (int group = 0; group < L; group += 8) {
            move_transposed8(to + w * L + group, L, row + group * sample + w, sample);
          }
        }
      }
      for (; w < W; ++w) {
        for (int64_t l = 0; l < count; ++l) to[w * L + l] = row[l * sample + w];
      }
    }
  }
}

// dst (count, channels, H, W) = lanes [0, count) of src (channels, H, W, L).
template <int L>
DTB_VEC8_INLINE void deinterleave(float* dst, const float* src, int64_t count, int64_t channels, int64_t H,
                                  int64_t W) {
  const int64_t floats = channels * H * W;  // of a sample
  int64_t i = 0;
  if (count == L) {
    for (; i + 8 <= floats; i += 8) {
      for (int group = 0; group < L; group += 8) {
        move_transposed8(dst + group * floats + i, floats, src + i * L + group, L);
      }
    }
  }
  for (int64_t l = 0; l < count; ++l) {
    for (int64_t at = i; at < floats; ++at) dst[l * floats + at] = src[at * L + l];
  }
}

// Outputs [o0, o0 + NO) x row oh x columns [ow0, ow0 + NP) of y, summed over every tap in registers.
template <int L, int NO, int NP>
DTB_VEC8_INLINE void forward_block(float* y, const float* x, const float* weight, const float* bias,
                                   int64_t o0, int64_t oh, int64_t ow0, const LaneConv& g) {
  const int64_t k = g.k, filter = g.in_channels * k * k * L;
  Vec<L> acc[NO][NP];
  for (int n = 0; n < NO; ++n) {
    const Vec<L> start = broadcast<L>(bias != nullptr ? bias[o0 + n] : 0.0f);
    for (int p = 0; p < NP; ++p) acc[n][p] = start;
  }
  for (int64_t c = 0; c < g.in_channels; ++c) {
    for (int64_t ki = 0; ki < k; ++ki) {
      const float* row = x + ((c * g.in_rows + oh + g.row0 + ki) * g.in_cols + ow0 + g.col0) * L;
      // Channel n's taps at + n·filter, each already in all L lanes.
      const float* taps = weight + ((o0 * g.in_channels + c) * k * k + ki * k) * L;
      for (int64_t kj = 0; kj < k; ++kj) {
        Vec<L> tap[NO];
        for (int n = 0; n < NO; ++n) tap[n] = load<L>(taps + n * filter + kj * L);
        for (int p = 0; p < NP; ++p) {
          const Vec<L> in = load<L>(row + (p + kj) * L);
          for (int n = 0; n < NO; ++n) acc[n][p] += tap[n] * in;
        }
      }
    }
  }
  for (int n = 0; n < NO; ++n) {
    float* out = y + (((o0 + n) * g.out_rows + oh) * g.out_cols + ow0) * L;
    for (int p = 0; p < NP; ++p) store<L>(out + p * L, acc[n][p]);
  }
}

// One output row of channels [o0, o0 + NO): blocks of kBlockPixels, then the rest as one block.
template <int L, int NO>
DTB_VEC8_INLINE void forward_row(float* y, const float* x, const float* weight, const float* bias, int64_t o0,
                                 int64_t oh, const LaneConv& g) {
  int64_t ow = 0;
  for (; ow + kBlockPixels <= g.out_cols; ow += kBlockPixels) {
    forward_block<L, NO, kBlockPixels>(y, x, weight, bias, o0, oh, ow, g);
  }
  switch (g.out_cols - ow) {
    case 4: forward_block<L, NO, 4>(y, x, weight, bias, o0, oh, ow, g); break;
    case 3: forward_block<L, NO, 3>(y, x, weight, bias, o0, oh, ow, g); break;
    case 2: forward_block<L, NO, 2>(y, x, weight, bias, o0, oh, ow, g); break;
    case 1: forward_block<L, NO, 1>(y, x, weight, bias, o0, oh, ow, g); break;
    default: break;
  }
}

// y (out_channels, out_rows, out_cols, L) = the convolution of x with weight (out_channels,
// in_channels, k, k, L: each tap in all L lanes), plus bias when given.
template <int L>
DTB_VEC8_INLINE void convolve(float* y, const float* x, const float* weight, const float* bias, const LaneConv& g) {
  int64_t o = 0;
  for (; o + kBlockChannels<L> <= g.out_channels; o += kBlockChannels<L>) {
    for (int64_t oh = 0; oh < g.out_rows; ++oh) forward_row<L, kBlockChannels<L>>(y, x, weight, bias, o, oh, g);
  }
  if constexpr (kBlockChannels<L> > 2) {
    for (; o + 2 <= g.out_channels; o += 2) {
      for (int64_t oh = 0; oh < g.out_rows; ++oh) forward_row<L, 2>(y, x, weight, bias, o, oh, g);
    }
  }
  for (; o < g.out_channels; ++o) {
    for (int64_t oh = 0; oh < g.out_rows; ++oh) forward_row<L, 1>(y, x, weight, bias, o, oh, g);
  }
}

// dw[n][kj] += Σ over the plane of dy[n] · x shifted by kj, for NO output channels and K taps of
// one filter row at once (dy: the output gradient planes, x: the input rows at this filter row).
template <int L, int NO, int K>
DTB_VEC8_INLINE void filter_row(float* const (&dw)[NO], const float* const (&dy)[NO], const float* x,
                                const ConvSizes& s, int64_t dy_cols, int64_t x_cols) {
  Vec<L> acc[NO][K] = {};
  for (int64_t oh = 0; oh < s.out_height; ++oh) {
    const float* in = x + oh * x_cols * L;
    for (int64_t ow = 0; ow < s.out_width; ++ow) {
      Vec<L> grad[NO];
      for (int n = 0; n < NO; ++n) grad[n] = load<L>(dy[n] + (oh * dy_cols + ow) * L);
      for (int kj = 0; kj < K; ++kj) {
        const Vec<L> v = load<L>(in + (ow + kj) * L);
        for (int n = 0; n < NO; ++n) acc[n][kj] += grad[n] * v;
      }
    }
  }
  for (int n = 0; n < NO; ++n) {
    for (int kj = 0; kj < K; ++kj) dw[n][kj] += lane_sum<L>(acc[n][kj]);
  }
}

// The same for a filter row of any width, one tap at a time.
template <int L, int NO>
DTB_VEC8_INLINE void filter_row_any(float* const (&dw)[NO], const float* const (&dy)[NO], const float* x,
                                    const ConvSizes& s, int64_t dy_cols, int64_t x_cols) {
  for (int64_t kj = 0; kj < s.kernel; ++kj) {
    Vec<L> acc[NO] = {};
    for (int64_t oh = 0; oh < s.out_height; ++oh) {
      const float* in = x + (oh * x_cols + kj) * L;
      for (int64_t ow = 0; ow < s.out_width; ++ow) {
        const Vec<L> v = load<L>(in + ow * L);
        for (int n = 0; n < NO; ++n) acc[n] += load<L>(dy[n] + (oh * dy_cols + ow) * L) * v;
      }
    }
    for (int n = 0; n < NO; ++n) dw[n][kj] += lane_sum<L>(acc[n]);
  }
}

// Output channels [o0, o0 + NO) of dweight (Cout, C, k, k) += this group's filter gradient.
// dy: the output gradient (Cout, dy_rows, dy_cols, L) whose plane starts at (lead, lead); x: the
// padded input (C, Hp, Wp, L).
template <int L, int NO>
DTB_VEC8_INLINE void filter_gradient_of(float* dweight, const float* dy, const float* x, int64_t o0,
                                        const ConvSizes& s, int64_t dy_rows, int64_t dy_cols, int64_t lead) {
  const int64_t k = s.kernel, C = s.in_channels;
  const int64_t Hp = s.height + 2 * s.padding, Wp = s.width + 2 * s.padding;
  const float* grad[NO];
  for (int n = 0; n < NO; ++n) grad[n] = dy + (((o0 + n) * dy_rows + lead) * dy_cols + lead) * L;
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t ki = 0; ki < k; ++ki) {
      float* dw[NO];
      for (int n = 0; n < NO; ++n) dw[n] = dweight + (((o0 + n) * C + c) * k + ki) * k;
      const float* rows = x + (c * Hp + ki) * Wp * L;
      if (k == 5) {
        filter_row<L, NO, 5>(dw, grad, rows, s, dy_cols, Wp);
      } else if (k == 3) {
        filter_row<L, NO, 3>(dw, grad, rows, s, dy_cols, Wp);
      } else {
        filter_row_any<L, NO>(dw, grad, rows, s, dy_cols, Wp);
      }
    }
  }
}

template <int L>
DTB_VEC8_INLINE void filter_gradient(float* dweight, const float* dy, const float* x, const ConvSizes& s,
                                     int64_t dy_rows, int64_t dy_cols, int64_t lead) {
  int64_t o = 0;
  if constexpr (kBlockChannels<L> > 2) {
    for (; o + kBlockChannels<L> <= s.out_channels; o += kBlockChannels<L>) {
      filter_gradient_of<L, kBlockChannels<L>>(dweight, dy, x, o, s, dy_rows, dy_cols, lead);
    }
  }
  for (; o + 2 <= s.out_channels; o += 2) filter_gradient_of<L, 2>(dweight, dy, x, o, s, dy_rows, dy_cols, lead);
  if (o < s.out_channels) filter_gradient_of<L, 1>(dweight, dy, x, o, s, dy_rows, dy_cols, lead);
}

}  // namespace dtbench::lanes
