#include "core/kernels/conv_direct.h"

#include <algorithm>
#include <vector>

#include <omp.h>

#include "core/kernels/conv_gemm.h"
#include "core/kernels/group_threads.h"
#include "core/kernels/kernel_scratch.h"
#include "core/kernels/target_clones.h"
#include "core/kernels/vec8.h"

// The per-sample kernels are built twice, for Haswell-class CPUs (AVX2, FMA) and for the baseline,
// the loader picking one: the project builds without -march=native (the binary may run on other
// nodes), and these loops are the whole of the work.
#define DTB_CLONES DTB_TARGET_CLONES("fma", "default")

namespace dtbench {

namespace {

// Channel pairs (C·Cout) up to which the direct path beats im2col + sgemm. Measured at 1 thread
// on the AMD EPYC (best of 58 runs, batch 64): LeNet-5's first layer, 1 -> 6 on 28x28 with 5x5
// filters, forward 0.39 ms against 0.83, filter gradient 0.64 against 1.30; its second, 6 -> 16
// on 14x14 (96 pairs), came out even (10x10 outputs waste 40% of a wide row), so it stays on sgemm;
// with two channels per pass (below) it still lost: LeNet-5's step 5.7 ms against 5.35 (best of 300).
constexpr int64_t kMaxChannelPairs = 32;
// Outputs are accumulated this many at a time, in registers (4 AVX vectors) across every tap,
// rather than loaded and stored once per tap.
constexpr int64_t kChunk = 32;

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// The wide layout of one sample's planes.
struct Wide {
  int64_t Wp;        // padded row: W + 2·pad
  int64_t plane;     // padded plane: (H + 2·pad)·Wp
  int64_t plane_r;   // the same rounded up to whole chunks: the input gradient's plane stride
  int64_t span;      // a wide output plane, Ho·Wp, rounded up to whole chunks
  int64_t lead;      // zeros before each output-gradient plane: the largest tap shift
  int64_t grad_row;  // output-gradient plane stride: lead + plane_r + kChunk, zeros around
};

Wide wide_of(const ConvSizes& s) {
  const int64_t Wp = s.width + 2 * s.padding;
  const int64_t plane = (s.height + 2 * s.padding) * Wp;
  const int64_t lead = (s.kernel - 1) * Wp + s.kernel - 1;
  const int64_t plane_r = round_up(plane, kChunk);
  return {Wp, plane, plane_r, round_up(s.out_height * Wp, kChunk), lead, lead + plane_r + kChunk};
}

// Floats of a padded sample: wide rows of the last plane read past it, up to a chunk and a row of
// taps beyond.
int64_t padded_floats(const ConvSizes& s, const Wide& w) {
  return s.in_channels * w.plane_r + s.kernel + kChunk;
}

struct Workspace {
  std::vector<float> padded;   // (C, Hp, Wp), planes plane_r apart: the input or its gradient
  std::vector<float> wide;     // (Cout, span) or (Cout, grad_row): the output or its gradient
  std::vector<float> dweight;  // (Cout, C, k, k): this thread's share
};

Workspace& workspace() {
  thread_local Workspace instance;
  return instance;
}

// in_pad = inp (C, H, W) with zero borders.
void pad_sample(float* in_pad, const float* inp, const ConvSizes& s, const Wide& w) {
  std::fill_n(in_pad, padded_floats(s, w), 0.0f);
  for (int64_t c = 0; c < s.in_channels; ++c) {
    for (int64_t h = 0; h < s.height; ++h) {
      std::copy_n(inp + (c * s.height + h) * s.width, s.width,
                  in_pad + c * w.plane_r + (h + s.padding) * w.Wp + s.padding);
    }
  }
}

// dout (Cout, Ho, Wo) -> rows of grad_row floats: lead zeros, the plane with row stride Wp (the
// extra columns zero), zeros after.
void widen_gradient(float* wide, const float* plain, const ConvSizes& s, const Wide& w) {
  std::fill_n(wide, s.out_channels * w.grad_row, 0.0f);
  for (int64_t o = 0; o < s.out_channels; ++o) {
    for (int64_t h = 0; h < s.out_height; ++h) {
      std::copy_n(plain + (o * s.out_height + h) * s.out_width, s.out_width,
                  wide + o * w.grad_row + w.lead + h * w.Wp);
    }
  }
}

// out_wide (Cout, span) -> out (Cout, Ho, Wo).
void narrow(float* plain, const float* wide, const ConvSizes& s, const Wide& w) {
  for (int64_t o = 0; o < s.out_channels; ++o) {
    for (int64_t h = 0; h < s.out_height; ++h) {
      std::copy_n(wide + o * w.span + h * w.Wp, s.out_width,
                  plain + (o * s.out_height + h) * s.out_width);
    }
  }
}

// din_pad (C, plane_r) -> dinp (C, H, W): the interior.
void unpad(float* dinp, const float* din_pad, const ConvSizes& s, const Wide& w) {
  for (int64_t c = 0; c < s.in_channels; ++c) {
    for (int64_t h = 0; h < s.height; ++h) {
      std::copy_n(din_pad + c * w.plane_r + (h + s.padding) * w.Wp + s.padding, s.width,
                  dinp + (c * s.height + h) * s.width);
    }
  }
}

using vec8::broadcast;
using vec8::lane_sum;
using vec8::load;
using vec8::store;
using vec8::Vec8;

// Output channels [o0, o0 + NO) of out_wide (Cout, span), a chunk (kChunk = 4 vectors) at a time
// summed over every tap of every channel. Each input vector loaded serves NO channels' filters.
template <int NO>
DTB_VEC8_INLINE void forward_channels(float* out_wide, const float* in_pad, const float* weight,
                                      const float* bias, int64_t o0, const ConvSizes& s,
                                      const Wide& w) {
  const int64_t k = s.kernel, C = s.in_channels, filter_floats = C * k * k;
  const float* filter = weight + o0 * filter_floats;  // (NO, C, k, k)
  for (int64_t i0 = 0; i0 < w.span; i0 += kChunk) {
    Vec8 acc[NO][4];
    for (int n = 0; n < NO; ++n) {
      acc[n][0] = broadcast(bias != nullptr ? bias[o0 + n] : 0.0f);
      acc[n][1] = acc[n][2] = acc[n][3] = acc[n][0];
    }
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t ki = 0; ki < k; ++ki) {
        const float* row = in_pad + c * w.plane_r + ki * w.Wp + i0;
        const float* taps = filter + (c * k + ki) * k;  // channel n's at + n·filter_floats
        for (int64_t kj = 0; kj < k; ++kj) {
          const Vec8 x[4] = {load(row + kj), load(row + kj + 8), load(row + kj + 16),
                             load(row + kj + 24)};
          for (int n = 0; n < NO; ++n) {
            const Vec8 t = broadcast(taps[n * filter_floats + kj]);
            for (int v = 0; v < 4; ++v) acc[n][v] += t * x[v];
          }
        }
      }
    }
    for (int n = 0; n < NO; ++n) {
      float* out = out_wide + (o0 + n) * w.span + i0;
      for (int v = 0; v < 4; ++v) store(out + 8 * v, acc[n][v]);
    }
  }
}

// out_wide (Cout, span) = the sample's output, output channels two at a time.
DTB_CLONES void forward_sample(float* out_wide, const float* in_pad, const float* weight,
                               const float* bias, const ConvSizes& s, const Wide& w) {
  int64_t o = 0;
  for (; o + 2 <= s.out_channels; o += 2) forward_channels<2>(out_wide, in_pad, weight, bias, o, s, w);
  if (o < s.out_channels) forward_channels<1>(out_wide, in_pad, weight, bias, o, s, w);
}

// dw[n] (K) += the dot products of grad[n] (span) with row shifted by 0..K−1, for NO output
// channels at once (grad[n] and dw[n] are channel n's): one pass over the plane, each shifted
// input vector loaded once for all NO channels, NO·K vectors of partial sums.
template <int NO, int K>
DTB_VEC8_INLINE void add_tap_rows(float* const (&dw)[NO], const float* const (&grad)[NO],
                                  const float* row, int64_t span) {
  Vec8 acc[NO][K] = {};
  for (int64_t i0 = 0; i0 < span; i0 += 8) {
    Vec8 g[NO];
    for (int n = 0; n < NO; ++n) g[n] = load(grad[n] + i0);
    for (int kj = 0; kj < K; ++kj) {
      const Vec8 x = load(row + i0 + kj);
      for (int n = 0; n < NO; ++n) acc[n][kj] += g[n] * x;
    }
  }
  for (int n = 0; n < NO; ++n) {
    for (int kj = 0; kj < K; ++kj) dw[n][kj] += lane_sum(acc[n][kj]);
  }
}

// The same for any k, one channel and one tap at a time.
DTB_VEC8_INLINE void add_tap_row(float* dw, const float* grad, const float* row, int64_t span,
                                 int64_t k) {
  for (int64_t kj = 0; kj < k; ++kj) {
    Vec8 a0 = {}, a1 = {};
    for (int64_t i0 = 0; i0 < span; i0 += 16) {
      a0 += load(grad + i0) * load(row + i0 + kj);
      a1 += load(grad + i0 + 8) * load(row + i0 + kj + 8);
    }
    dw[kj] += lane_sum(a0 + a1);
  }
}

// Output channels [o0, o0 + NO) of dweight (Cout, C, k, k) += this sample's filter gradient, a
// row of taps at a time (the 3x3 and 5x5 rows with the row's taps unrolled).
template <int NO>
DTB_VEC8_INLINE void add_filter_gradient_of(float* dweight, const float* dout_wide,
                                            const float* in_pad, int64_t o0, const ConvSizes& s,
                                            const Wide& w) {
  const int64_t k = s.kernel, C = s.in_channels;
  const float* grad[NO];  // (span) each, zero beyond the plane
  for (int n = 0; n < NO; ++n) grad[n] = dout_wide + (o0 + n) * w.grad_row + w.lead;
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t ki = 0; ki < k; ++ki) {
      float* dw[NO];  // (k) each
      for (int n = 0; n < NO; ++n) dw[n] = dweight + (((o0 + n) * C + c) * k + ki) * k;
      const float* row = in_pad + c * w.plane_r + ki * w.Wp;
      if (k == 5) {
        add_tap_rows<NO, 5>(dw, grad, row, w.span);
      } else if (k == 3) {
        add_tap_rows<NO, 3>(dw, grad, row, w.span);
      } else {
        for (int n = 0; n < NO; ++n) add_tap_row(dw[n], grad[n], row, w.span, k);
      }
    }
  }
}

// dweight (Cout, C, k, k) += this sample's filter gradient, output channels two at a time.
DTB_CLONES void add_filter_gradient(float* dweight, const float* dout_wide, const float* in_pad,
                                    const ConvSizes& s, const Wide& w) {
  int64_t o = 0;
  for (; o + 2 <= s.out_channels; o += 2) add_filter_gradient_of<2>(dweight, dout_wide, in_pad, o, s, w);
  if (o < s.out_channels) add_filter_gradient_of<1>(dweight, dout_wide, in_pad, o, s, w);
}

// Input channels [c0, c0 + NC) of din_pad (C, plane_r): this sample's input gradient, padding
// included; written. Gathered: din_pad[c][p] = Σ_o Σ_taps w[o, c, tap] · dout_wide[o][p − shift
// (tap)], so each chunk of the plane is summed in registers (the output gradient has zeros where
// p − shift falls outside), each output-gradient vector loaded once for NC channels.
template <int NC>
DTB_VEC8_INLINE void input_gradient_of(float* din_pad, const float* dout_wide, const float* weight,
                                       int64_t c0, const ConvSizes& s, const Wide& w) {
  const int64_t k = s.kernel, C = s.in_channels;
  for (int64_t p0 = 0; p0 < w.plane_r; p0 += kChunk) {
    Vec8 acc[NC][4] = {};
    for (int64_t o = 0; o < s.out_channels; ++o) {
      const float* grad = dout_wide + o * w.grad_row + w.lead + p0;
      const float* taps = weight + (o * C + c0) * k * k;  // (k, k), channel n's at + n·k·k
      for (int64_t ki = 0; ki < k; ++ki) {
        const float* row = grad - ki * w.Wp;
        for (int64_t kj = 0; kj < k; ++kj) {
          const Vec8 g[4] = {load(row - kj), load(row - kj + 8), load(row - kj + 16),
                             load(row - kj + 24)};
          for (int n = 0; n < NC; ++n) {
            const Vec8 t = broadcast(taps[n * k * k + ki * k + kj]);
            for (int v = 0; v < 4; ++v) acc[n][v] += t * g[v];
          }
        }
      }
    }
    for (int n = 0; n < NC; ++n) {
      float* out = din_pad + (c0 + n) * w.plane_r + p0;
      for (int v = 0; v < 4; ++v) store(out + 8 * v, acc[n][v]);
    }
  }
}

// din_pad (C, plane_r) = this sample's input gradient, input channels two at a time.
DTB_CLONES void input_gradient(float* din_pad, const float* dout_wide, const float* weight,
                               const ConvSizes& s, const Wide& w) {
  int64_t c = 0;
  for (; c + 2 <= s.in_channels; c += 2) input_gradient_of<2>(din_pad, dout_wide, weight, c, s, w);
  if (c < s.in_channels) input_gradient_of<1>(din_pad, dout_wide, weight, c, s, w);
}

int sample_threads(const ConvSizes& s) {
  return static_cast<int>(std::clamp<int64_t>(s.batch, 1, GroupThreads::available()));
}

}  // namespace

bool conv2d_direct_applies(const ConvSizes& sizes) {
  return sizes.stride == 1 &&
         sizes.in_channels * sizes.out_channels <= kMaxChannelPairs;
}

void conv2d_direct_forward(float* out, const float* inp, const float* weight, const float* bias,
                           const ConvSizes& sizes) {
  const Wide w = wide_of(sizes);
  const int64_t in_sample = sizes.in_channels * sizes.in_plane();
  const int64_t out_sample = sizes.out_channels * sizes.out_plane();
  const int threads = sample_threads(sizes);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t b = 0; b < sizes.batch; ++b) {
    Workspace& ws = workspace();  // this thread's
    float* in_pad = sized(ws.padded, padded_floats(sizes, w));
    float* out_wide = sized(ws.wide, sizes.out_channels * w.span);
    pad_sample(in_pad, inp + b * in_sample, sizes, w);
    forward_sample(out_wide, in_pad, weight, bias, sizes, w);
    narrow(out + b * out_sample, out_wide, sizes, w);
  }
}

void conv2d_direct_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                            const float* inp, const float* weight, const ConvSizes& sizes) {
  const Wide w = wide_of(sizes);
  const int64_t in_sample = sizes.in_channels * sizes.in_plane();
  const int64_t out_sample = sizes.out_channels * sizes.out_plane();
  const int64_t filter_floats = sizes.out_channels * sizes.in_channels * sizes.kernel * sizes.kernel;
  const int threads = sample_threads(sizes);
  std::vector<const float*> shares(static_cast<size_t>(threads), nullptr);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    Workspace& ws = workspace();  // this thread's
    float* share = dweight != nullptr ? zeroed(ws.dweight, filter_floats) : nullptr;
#pragma omp for schedule(static)
    for (int64_t b = 0; b < sizes.batch; ++b) {
      float* dout_wide = sized(ws.wide, sizes.out_channels * w.grad_row);
      float* padded = sized(ws.padded, padded_floats(sizes, w));
      widen_gradient(dout_wide, dout + b * out_sample, sizes, w);
      if (share != nullptr) {
        pad_sample(padded, inp + b * in_sample, sizes, w);
        add_filter_gradient(share, dout_wide, padded, sizes, w);
      }
      if (dinp == nullptr) continue;
      input_gradient(padded, dout_wide, weight, sizes, w);  // the padded input is done with
      unpad(dinp + b * in_sample, padded, sizes, w);
    }
    shares[static_cast<size_t>(omp_get_thread_num())] = share;
  }
  if (dweight != nullptr) add_weight_shares(dweight, shares, filter_floats);
  if (dbias != nullptr) conv2d_bias_gradient(dbias, dout, sizes);
}

}  // namespace dtbench
