#include "core/kernels/conv_lanes.h"

#include <algorithm>
#include <vector>

#include <omp.h>

#include "core/kernels/conv_gemm.h"
#include "core/kernels/group_threads.h"
#include "core/kernels/kernel_scratch.h"
#include "core/kernels/target_clones.h"
#include "core/kernels/vec8.h"

// Built for Haswell-class CPUs (AVX2, FMA) and for the baseline, the loader picking one (as in
// conv_direct.cpp).
#define DTB_CLONES DTB_TARGET_CLONES("fma", "default")

namespace dtbench {

namespace {

using vec8::broadcast;
using vec8::lane_sum;
using vec8::load;
using vec8::store;
using vec8::Vec8;

constexpr int64_t kLanes = 8;
// Where the path is taken: LeNet-5's two layers (3 -> 6 on a 28x28 output, 6 -> 16 on 10x10),
// measured against the one-sample direct kernel and im2col + sgemm. Larger planes' interleaved
// blocks leave the caches; more channel pairs make sgemm's products long enough to win (and the
// 3 -> 64 stems of VGG and ResNet, 192 pairs, stay where they were measured).
constexpr int64_t kMaxPlane = 1024;
constexpr int64_t kMaxChannelPairs = 128;
// Output channels and pixels of a row summed together in registers: 10 partial sums, 2 filter taps
// and the input vector they multiply (with 12 sums GCC spilled; 2 x 4 and 2 x 5 measured alike).
constexpr int kBlockChannels = 2;
constexpr int kBlockPixels = 5;

// A convolution over interleaved planes (channels, rows, cols, 8): output (oh, ow) reads the input
// window at (oh + row0, ow + col0).
struct LaneConv {
  int64_t in_channels, in_rows, in_cols;
  int64_t out_channels, out_rows, out_cols;
  int64_t row0, col0;
  int64_t k;
};

// The 8x8 block r (r[i]: 8 floats of row i) transposed in place, in three rounds of two-vector
// shuffles that GCC emits as unpck, shufps and vperm2f128: r[j] then holds column j.
DTB_VEC8_INLINE void transpose8(Vec8 (&r)[8]) {
  using vec8::Index8;
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

// dst (channels, rows, cols, 8) = samples [0, count) of src (count, channels, H, W) placed at
// (pad, pad) of each plane, in their lanes; zero around them and in lanes count..7. Eight samples
// move as 8x8 transposes of eight pixels each.
DTB_CLONES void interleave(float* dst, const float* src, int64_t count, int64_t channels, int64_t H, int64_t W,
                           int64_t pad, int64_t rows, int64_t cols) {
  const int64_t sample = channels * H * W;
  if (count < kLanes) {
    std::fill_n(dst, channels * rows * cols * kLanes, 0.0f);
  } else {  // only the border
    for (int64_t c = 0; c < channels; ++c) {
      float* plane = dst + c * rows * cols * kLanes;
      std::fill_n(plane, pad * cols * kLanes, 0.0f);
      std::fill_n(plane + (pad + H) * cols * kLanes, (rows - pad - H) * cols * kLanes, 0.0f);
      for (int64_t h = pad; h < pad + H; ++h) {
        std::fill_n(plane + h * cols * kLanes, pad * kLanes, 0.0f);
        std::fill_n(plane + (h * cols + pad + W) * kLanes, (cols - pad - W) * kLanes, 0.0f);
      }
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t h = 0; h < H; ++h) {
      const float* row = src + (c * H + h) * W;  // sample l's at + l·sample
      float* to = dst + ((c * rows + h + pad) * cols + pad) * kLanes;
      int64_t w = 0;
      if (count == kLanes) {
        for (; w + kLanes <= W; w += kLanes) {
          Vec8 block[8];
          for (int l = 0; l < 8; ++l) block[l] = load(row + l * sample + w);
          transpose8(block);
          for (int j = 0; j < 8; ++j) store(to + (w + j) * kLanes, block[j]);
        }
      }
      for (; w < W; ++w) {
        for (int64_t l = 0; l < count; ++l) to[w * kLanes + l] = row[l * sample + w];
      }
    }
  }
}

// dst (count, channels, H, W) = lanes [0, count) of src (channels, H, W, 8).
DTB_CLONES void deinterleave(float* dst, const float* src, int64_t count, int64_t channels, int64_t H,
                             int64_t W) {
  const int64_t floats = channels * H * W;  // of a sample
  int64_t i = 0;
  if (count == kLanes) {
    for (; i + kLanes <= floats; i += kLanes) {
      Vec8 block[8];
      for (int j = 0; j < 8; ++j) block[j] = load(src + (i + j) * kLanes);
      transpose8(block);
      for (int l = 0; l < 8; ++l) store(dst + l * floats + i, block[l]);
    }
  }
  for (int64_t l = 0; l < count; ++l) {
    for (int64_t at = i; at < floats; ++at) dst[l * floats + at] = src[at * kLanes + l];
  }
}

// Outputs [o0, o0 + NO) x row oh x columns [ow0, ow0 + NP) of y, summed over every tap in registers.
template <int NO, int NP>
DTB_VEC8_INLINE void forward_block(float* y, const float* x, const float* weight, const float* bias,
                                   int64_t o0, int64_t oh, int64_t ow0, const LaneConv& g) {
  const int64_t k = g.k, filter = g.in_channels * k * k * kLanes;
  Vec8 acc[NO][NP];
  for (int n = 0; n < NO; ++n) {
    const Vec8 start = broadcast(bias != nullptr ? bias[o0 + n] : 0.0f);
    for (int p = 0; p < NP; ++p) acc[n][p] = start;
  }
  for (int64_t c = 0; c < g.in_channels; ++c) {
    for (int64_t ki = 0; ki < k; ++ki) {
      const float* row = x + ((c * g.in_rows + oh + g.row0 + ki) * g.in_cols + ow0 + g.col0) * kLanes;
      // Channel n's taps at + n·filter, each already in all eight lanes.
      const float* taps = weight + ((o0 * g.in_channels + c) * k * k + ki * k) * kLanes;
      for (int64_t kj = 0; kj < k; ++kj) {
        Vec8 tap[NO];
        for (int n = 0; n < NO; ++n) tap[n] = load(taps + n * filter + kj * kLanes);
        for (int p = 0; p < NP; ++p) {
          const Vec8 in = load(row + (p + kj) * kLanes);
          for (int n = 0; n < NO; ++n) acc[n][p] += tap[n] * in;
        }
      }
    }
  }
  for (int n = 0; n < NO; ++n) {
    float* out = y + (((o0 + n) * g.out_rows + oh) * g.out_cols + ow0) * kLanes;
    for (int p = 0; p < NP; ++p) store(out + p * kLanes, acc[n][p]);
  }
}

// One output row of channels [o0, o0 + NO): blocks of kBlockPixels, then the rest as one block.
template <int NO>
DTB_VEC8_INLINE void forward_row(float* y, const float* x, const float* weight, const float* bias, int64_t o0,
                                 int64_t oh, const LaneConv& g) {
  int64_t ow = 0;
  for (; ow + kBlockPixels <= g.out_cols; ow += kBlockPixels) {
    forward_block<NO, kBlockPixels>(y, x, weight, bias, o0, oh, ow, g);
  }
  switch (g.out_cols - ow) {
    case 5: forward_block<NO, 5>(y, x, weight, bias, o0, oh, ow, g); break;
    case 4: forward_block<NO, 4>(y, x, weight, bias, o0, oh, ow, g); break;
    case 3: forward_block<NO, 3>(y, x, weight, bias, o0, oh, ow, g); break;
    case 2: forward_block<NO, 2>(y, x, weight, bias, o0, oh, ow, g); break;
    case 1: forward_block<NO, 1>(y, x, weight, bias, o0, oh, ow, g); break;
    default: break;
  }
}

// y (out_channels, out_rows, out_cols, 8) = the convolution of x with weight (out_channels,
// in_channels, k, k, 8: each tap in all eight lanes, see SpreadTaps), plus bias when given.
DTB_CLONES void convolve(float* y, const float* x, const float* weight, const float* bias, const LaneConv& g) {
  int64_t o = 0;
  for (; o + kBlockChannels <= g.out_channels; o += kBlockChannels) {
    for (int64_t oh = 0; oh < g.out_rows; ++oh) forward_row<kBlockChannels>(y, x, weight, bias, o, oh, g);
  }
  for (; o < g.out_channels; ++o) {
    for (int64_t oh = 0; oh < g.out_rows; ++oh) forward_row<1>(y, x, weight, bias, o, oh, g);
  }
}

// dw[n][kj] += Σ over the plane of dy[n] · x shifted by kj, for NO output channels and K taps of
// one filter row at once (dy: the output gradient planes, x: the input rows at this filter row).
template <int NO, int K>
DTB_VEC8_INLINE void filter_row(float* const (&dw)[NO], const float* const (&dy)[NO], const float* x,
                                const ConvSizes& s, int64_t dy_cols, int64_t x_cols) {
  Vec8 acc[NO][K] = {};
  for (int64_t oh = 0; oh < s.out_height; ++oh) {
    const float* in = x + oh * x_cols * kLanes;
    for (int64_t ow = 0; ow < s.out_width; ++ow) {
      Vec8 grad[NO];
      for (int n = 0; n < NO; ++n) grad[n] = load(dy[n] + (oh * dy_cols + ow) * kLanes);
      for (int kj = 0; kj < K; ++kj) {
        const Vec8 v = load(in + (ow + kj) * kLanes);
        for (int n = 0; n < NO; ++n) acc[n][kj] += grad[n] * v;
      }
    }
  }
  for (int n = 0; n < NO; ++n) {
    for (int kj = 0; kj < K; ++kj) dw[n][kj] += lane_sum(acc[n][kj]);
  }
}

// The same for a filter row of any width, one tap at a time.
template <int NO>
DTB_VEC8_INLINE void filter_row_any(float* const (&dw)[NO], const float* const (&dy)[NO], const float* x,
                                    const ConvSizes& s, int64_t dy_cols, int64_t x_cols) {
  for (int64_t kj = 0; kj < s.kernel; ++kj) {
    Vec8 acc[NO] = {};
    for (int64_t oh = 0; oh < s.out_height; ++oh) {
      const float* in = x + (oh * x_cols + kj) * kLanes;
      for (int64_t ow = 0; ow < s.out_width; ++ow) {
        const Vec8 v = load(in + ow * kLanes);
        for (int n = 0; n < NO; ++n) acc[n] += load(dy[n] + (oh * dy_cols + ow) * kLanes) * v;
      }
    }
    for (int n = 0; n < NO; ++n) dw[n][kj] += lane_sum(acc[n]);
  }
}

// Output channels [o0, o0 + NO) of dweight (Cout, C, k, k) += this group's filter gradient.
// dy: the output gradient (Cout, dy_rows, dy_cols, 8) whose plane starts at (lead, lead); x: the
// padded input (C, Hp, Wp, 8).
template <int NO>
DTB_VEC8_INLINE void filter_gradient_of(float* dweight, const float* dy, const float* x, int64_t o0,
                                        const ConvSizes& s, int64_t dy_rows, int64_t dy_cols, int64_t lead) {
  const int64_t k = s.kernel, C = s.in_channels;
  const int64_t Hp = s.height + 2 * s.padding, Wp = s.width + 2 * s.padding;
  const float* grad[NO];
  for (int n = 0; n < NO; ++n) grad[n] = dy + (((o0 + n) * dy_rows + lead) * dy_cols + lead) * kLanes;
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t ki = 0; ki < k; ++ki) {
      float* dw[NO];
      for (int n = 0; n < NO; ++n) dw[n] = dweight + (((o0 + n) * C + c) * k + ki) * k;
      const float* rows = x + (c * Hp + ki) * Wp * kLanes;
      if (k == 5) {
        filter_row<NO, 5>(dw, grad, rows, s, dy_cols, Wp);
      } else if (k == 3) {
        filter_row<NO, 3>(dw, grad, rows, s, dy_cols, Wp);
      } else {
        filter_row_any<NO>(dw, grad, rows, s, dy_cols, Wp);
      }
    }
  }
}

DTB_CLONES void filter_gradient(float* dweight, const float* dy, const float* x, const ConvSizes& s,
                                int64_t dy_rows, int64_t dy_cols, int64_t lead) {
  int64_t o = 0;
  for (; o + 2 <= s.out_channels; o += 2) filter_gradient_of<2>(dweight, dy, x, o, s, dy_rows, dy_cols, lead);
  if (o < s.out_channels) filter_gradient_of<1>(dweight, dy, x, o, s, dy_rows, dy_cols, lead);
}

struct Workspace {
  std::vector<float> input;    // (C, Hp, Wp, 8): a group's padded input
  std::vector<float> output;   // (Cout, Ho, Wo, 8), or the output gradient padded by k − 1
  std::vector<float> result;   // (C, H, W, 8): a group's input gradient
  std::vector<float> dweight;  // (Cout, C, k, k): this thread's share
};

Workspace& workspace() {
  thread_local Workspace instance;
  return instance;
}

// Filter taps, each repeated in eight lanes: the kernel loads a tap as a vector, where a broadcast
// per tap and block cost GCC an insert chain (it merges neighbouring taps' loads). Kept per calling
// thread, grown only, so that no step allocates.
struct SpreadTaps {
  std::vector<float> forward;  // (Cout, C, k, k, 8)
  std::vector<float> flipped;  // (C, Cout, k, k, 8), each filter turned by 180 degrees
};

SpreadTaps& spread_taps() {
  thread_local SpreadTaps instance;
  return instance;
}

// weight (Cout, C, k, k) spread into `lanes`.
const float* spread(std::vector<float>& lanes, const float* weight, const ConvSizes& s) {
  const int64_t count = s.out_channels * s.in_channels * s.kernel * s.kernel;
  float* to = sized(lanes, count * kLanes);
  for (int64_t t = 0; t < count; ++t) std::fill_n(to + t * kLanes, kLanes, weight[t]);
  return to;
}

// The same transposed to (C, Cout) and flipped: the filters of the input gradient's full
// convolution.
const float* spread_flipped(std::vector<float>& lanes, const float* weight, const ConvSizes& s) {
  const int64_t C = s.in_channels, Cout = s.out_channels, taps = s.kernel * s.kernel;
  float* to = sized(lanes, Cout * C * taps * kLanes);
  for (int64_t o = 0; o < Cout; ++o) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t t = 0; t < taps; ++t) {
        std::fill_n(to + ((c * Cout + o) * taps + (taps - 1 - t)) * kLanes, kLanes, weight[(o * C + c) * taps + t]);
      }
    }
  }
  return to;
}

int64_t groups_of(int64_t batch) { return (batch + kLanes - 1) / kLanes; }

int group_threads(int64_t groups) {
  return static_cast<int>(std::clamp<int64_t>(groups, 1, GroupThreads::available()));
}

}  // namespace

bool conv2d_lanes_applies(const ConvSizes& sizes) {
  return sizes.stride == 1 && sizes.kernel >= 2 && sizes.out_plane() <= kMaxPlane &&
         sizes.in_channels * sizes.out_channels <= kMaxChannelPairs;
}

void conv2d_lanes_forward(float* out, const float* inp, const float* weight, const float* bias,
                          const ConvSizes& sizes) {
  const int64_t C = sizes.in_channels, Cout = sizes.out_channels, pad = sizes.padding;
  const int64_t Hp = sizes.height + 2 * pad, Wp = sizes.width + 2 * pad;
  const int64_t in_sample = C * sizes.in_plane(), out_sample = Cout * sizes.out_plane();
  const LaneConv g{C, Hp, Wp, Cout, sizes.out_height, sizes.out_width, 0, 0, sizes.kernel};
  const float* taps = spread(spread_taps().forward, weight, sizes);
  const int64_t groups = groups_of(sizes.batch);
  const int threads = group_threads(groups);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t index = 0; index < groups; ++index) {
    Workspace& ws = workspace();  // this thread's
    const int64_t b0 = index * kLanes, count = std::min(kLanes, sizes.batch - b0);
    float* x = sized(ws.input, C * Hp * Wp * kLanes);
    float* y = sized(ws.output, out_sample * kLanes);
    interleave(x, inp + b0 * in_sample, count, C, sizes.height, sizes.width, pad, Hp, Wp);
    convolve(y, x, taps, bias, g);
    deinterleave(out + b0 * out_sample, y, count, Cout, sizes.out_height, sizes.out_width);
  }
}

void conv2d_lanes_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                           const float* inp, const float* weight, const ConvSizes& sizes) {
  const int64_t C = sizes.in_channels, Cout = sizes.out_channels, k = sizes.kernel, pad = sizes.padding;
  const int64_t Hp = sizes.height + 2 * pad, Wp = sizes.width + 2 * pad;
  const int64_t in_sample = C * sizes.in_plane(), out_sample = Cout * sizes.out_plane();
  const int64_t filter_floats = Cout * C * k * k;
  // The output gradient padded by k − 1 on every side: the input gradient is its "full"
  // convolution with the filters transposed (C, Cout) and flipped, read from (pad, pad) on so that
  // only the input's own pixels are made.
  const int64_t dy_rows = sizes.out_height + 2 * (k - 1), dy_cols = sizes.out_width + 2 * (k - 1);
  const LaneConv full{Cout, dy_rows, dy_cols, C, sizes.height, sizes.width, pad, pad, k};
  const float* flipped = dinp != nullptr ? spread_flipped(spread_taps().flipped, weight, sizes) : nullptr;
  const int64_t groups = groups_of(sizes.batch);
  const int threads = group_threads(groups);
  std::vector<const float*> shares(static_cast<size_t>(threads), nullptr);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    Workspace& ws = workspace();  // this thread's
    float* share = dweight != nullptr ? zeroed(ws.dweight, filter_floats) : nullptr;
#pragma omp for schedule(static)
    for (int64_t index = 0; index < groups; ++index) {
      const int64_t b0 = index * kLanes, count = std::min(kLanes, sizes.batch - b0);
      float* dy = sized(ws.output, Cout * dy_rows * dy_cols * kLanes);
      interleave(dy, dout + b0 * out_sample, count, Cout, sizes.out_height, sizes.out_width, k - 1, dy_rows,
                 dy_cols);
      if (share != nullptr) {
        float* x = sized(ws.input, C * Hp * Wp * kLanes);
        interleave(x, inp + b0 * in_sample, count, C, sizes.height, sizes.width, pad, Hp, Wp);
        filter_gradient(share, dy, x, sizes, dy_rows, dy_cols, k - 1);
      }
      if (dinp == nullptr) continue;
      float* dx = sized(ws.result, in_sample * kLanes);
      convolve(dx, dy, flipped, nullptr, full);
      deinterleave(dinp + b0 * in_sample, dx, count, C, sizes.height, sizes.width);
    }
    shares[static_cast<size_t>(omp_get_thread_num())] = share;
  }
  if (dweight != nullptr) add_weight_shares(dweight, shares, filter_floats);
  if (dbias != nullptr) conv2d_bias_gradient(dbias, dout, sizes);
}

}  // namespace dtbench
