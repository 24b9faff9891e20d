#include "core/kernels/conv_lanes.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <omp.h>

#include "core/kernels/conv_gemm.h"
#include "core/kernels/conv_lanes_kernels.h"
#include "core/kernels/group_threads.h"
#include "core/kernels/kernel_scratch.h"
#include "core/kernels/target_clones.h"

// Eight lanes: built for Haswell-class CPUs (AVX2, FMA) and for the baseline, the loader picking one
// (as in conv_direct.cpp). Sixteen lanes: built for AVX-512F alone and called only where the CPU
// reports it (lanes16_runs_here), so the baseline build stays runnable everywhere.
#define DTB_CLONES DTB_TARGET_CLONES("fma", "default")
#define DTB_AVX512 __attribute__((target("avx512f,fma")))

namespace dtbench {

namespace {

using lanes::LaneConv;

// Where the path is taken: LeNet-5's two layers (3 -> 6 on a 28x28 output, 6 -> 16 on 10x10),
// measured against the one-sample direct kernel and im2col + sgemm. Larger planes' interleaved
// blocks leave the caches; more channel pairs make sgemm's products long enough to win (and the
// 3 -> 64 stems of VGG and ResNet, 192 pairs, stay where they were measured).
constexpr int64_t kMaxPlane = 1024;
constexpr int64_t kMaxChannelPairs = 128;

// The four kernels of one lane width, each a function built for that width's instruction set.
struct LaneKernels {
  int64_t lanes;
  void (*interleave)(float* dst, const float* src, int64_t count, int64_t channels, int64_t H, int64_t W,
                     int64_t pad, int64_t rows, int64_t cols);
  void (*deinterleave)(float* dst, const float* src, int64_t count, int64_t channels, int64_t H, int64_t W);
  void (*convolve)(float* y, const float* x, const float* weight, const float* bias, const LaneConv& g);
  void (*filter_gradient)(float* dweight, const float* dy, const float* x, const ConvSizes& s, int64_t dy_rows,
                          int64_t dy_cols, int64_t lead);
};

DTB_CLONES void interleave8(float* dst, const float* src, int64_t count, int64_t channels, int64_t H, int64_t W,
                            int64_t pad, int64_t rows, int64_t cols) {
  lanes::interleave<8>(dst, src, count, channels, H, W, pad, rows, cols);
}
DTB_CLONES void deinterleave8(float* dst, const float* src, int64_t count, int64_t channels, int64_t H, int64_t W) {
  lanes::deinterleave<8>(dst, src, count, channels, H, W);
}
DTB_CLONES void convolve8(float* y, const float* x, const float* weight, const float* bias, const LaneConv& g) {
  lanes::convolve<8>(y, x, weight, bias, g);
}
DTB_CLONES void filter_gradient8(float* dweight, const float* dy, const float* x, const ConvSizes& s,
                                 int64_t dy_rows, int64_t dy_cols, int64_t lead) {
  lanes::filter_gradient<8>(dweight, dy, x, s, dy_rows, dy_cols, lead);
}

DTB_AVX512 void interleave16(float* dst, const float* src, int64_t count, int64_t channels, int64_t H, int64_t W,
                             int64_t pad, int64_t rows, int64_t cols) {
  lanes::interleave<16>(dst, src, count, channels, H, W, pad, rows, cols);
}
DTB_AVX512 void deinterleave16(float* dst, const float* src, int64_t count, int64_t channels, int64_t H,
                               int64_t W) {
  lanes::deinterleave<16>(dst, src, count, channels, H, W);
}
DTB_AVX512 void convolve16(float* y, const float* x, const float* weight, const float* bias, const LaneConv& g) {
  lanes::convolve<16>(y, x, weight, bias, g);
}
DTB_AVX512 void filter_gradient16(float* dweight, const float* dy, const float* x, const ConvSizes& s,
                                  int64_t dy_rows, int64_t dy_cols, int64_t lead) {
  lanes::filter_gradient<16>(dweight, dy, x, s, dy_rows, dy_cols, lead);
}

constexpr LaneKernels kEightLanes{8, interleave8, deinterleave8, convolve8, filter_gradient8};
constexpr LaneKernels kSixteenLanes{16, interleave16, deinterleave16, convolve16, filter_gradient16};

struct Workspace {
  std::vector<float> input;    // (C, Hp, Wp, lanes): a group's padded input
  std::vector<float> output;   // (Cout, Ho, Wo, lanes), or the output gradient padded by k − 1
  std::vector<float> result;   // (C, H, W, lanes): a group's input gradient
  std::vector<float> dweight;  // (Cout, C, k, k): this thread's share
};

Workspace& workspace() {
  thread_local Workspace instance;
  return instance;
}

// Filter taps, each repeated in every lane: the kernel loads a tap as a vector, where a broadcast
// per tap and block cost GCC an insert chain (it merges neighbouring taps' loads). Kept per calling
// thread, grown only, so that no step allocates.
struct SpreadTaps {
  std::vector<float> forward;  // (Cout, C, k, k, lanes)
  std::vector<float> flipped;  // (C, Cout, k, k, lanes), each filter turned by 180 degrees
};

SpreadTaps& spread_taps() {
  thread_local SpreadTaps instance;
  return instance;
}

// weight (Cout, C, k, k) spread into `lanes` lanes of `taps`.
const float* spread(std::vector<float>& taps, int64_t lanes, const float* weight, const ConvSizes& s) {
  const int64_t count = s.out_channels * s.in_channels * s.kernel * s.kernel;
  float* to = sized(taps, count * lanes);
  for (int64_t t = 0; t < count; ++t) std::fill_n(to + t * lanes, lanes, weight[t]);
  return to;
}

// The same transposed to (C, Cout) and flipped: the filters of the input gradient's full
// convolution.
const float* spread_flipped(std::vector<float>& spread_taps, int64_t lanes, const float* weight,
                            const ConvSizes& s) {
  const int64_t C = s.in_channels, Cout = s.out_channels, taps = s.kernel * s.kernel;
  float* to = sized(spread_taps, Cout * C * taps * lanes);
  for (int64_t o = 0; o < Cout; ++o) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t t = 0; t < taps; ++t) {
        std::fill_n(to + ((c * Cout + o) * taps + (taps - 1 - t)) * lanes, lanes, weight[(o * C + c) * taps + t]);
      }
    }
  }
  return to;
}

int64_t groups_of(int64_t batch, int64_t lanes) { return (batch + lanes - 1) / lanes; }

int group_threads(int64_t groups) {
  return static_cast<int>(std::clamp<int64_t>(groups, 1, GroupThreads::available()));
}

void forward_in_lanes(const LaneKernels& kernels, float* out, const float* inp, const float* weight,
                      const float* bias, const ConvSizes& sizes) {
  const int64_t lanes = kernels.lanes;
  const int64_t C = sizes.in_channels, Cout = sizes.out_channels, pad = sizes.padding;
  const int64_t Hp = sizes.height + 2 * pad, Wp = sizes.width + 2 * pad;
  const int64_t in_sample = C * sizes.in_plane(), out_sample = Cout * sizes.out_plane();
  const LaneConv g{C, Hp, Wp, Cout, sizes.out_height, sizes.out_width, 0, 0, sizes.kernel};
  const float* taps = spread(spread_taps().forward, lanes, weight, sizes);
  const int64_t groups = groups_of(sizes.batch, lanes);
  const int threads = group_threads(groups);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t index = 0; index < groups; ++index) {
    Workspace& ws = workspace();  // this thread's
    const int64_t b0 = index * lanes, count = std::min(lanes, sizes.batch - b0);
    float* x = sized(ws.input, C * Hp * Wp * lanes);
    float* y = sized(ws.output, out_sample * lanes);
    kernels.interleave(x, inp + b0 * in_sample, count, C, sizes.height, sizes.width, pad, Hp, Wp);
    kernels.convolve(y, x, taps, bias, g);
    kernels.deinterleave(out + b0 * out_sample, y, count, Cout, sizes.out_height, sizes.out_width);
  }
}

void backward_in_lanes(const LaneKernels& kernels, float* dinp, float* dweight, float* dbias, const float* dout,
                       const float* inp, const float* weight, const ConvSizes& sizes) {
  const int64_t lanes = kernels.lanes;
  const int64_t C = sizes.in_channels, Cout = sizes.out_channels, k = sizes.kernel, pad = sizes.padding;
  const int64_t Hp = sizes.height + 2 * pad, Wp = sizes.width + 2 * pad;
  const int64_t in_sample = C * sizes.in_plane(), out_sample = Cout * sizes.out_plane();
  const int64_t filter_floats = Cout * C * k * k;
  // The output gradient padded by k − 1 on every side: the input gradient is its "full"
  // convolution with the filters transposed (C, Cout) and flipped, read from (pad, pad) on so that
  // only the input's own pixels are made.
  const int64_t dy_rows = sizes.out_height + 2 * (k - 1), dy_cols = sizes.out_width + 2 * (k - 1);
  const LaneConv full{Cout, dy_rows, dy_cols, C, sizes.height, sizes.width, pad, pad, k};
  const float* flipped = dinp != nullptr ? spread_flipped(spread_taps().flipped, lanes, weight, sizes) : nullptr;
  const int64_t groups = groups_of(sizes.batch, lanes);
  const int threads = group_threads(groups);
  std::vector<const float*> shares(static_cast<size_t>(threads), nullptr);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    Workspace& ws = workspace();  // this thread's
    float* share = dweight != nullptr ? zeroed(ws.dweight, filter_floats) : nullptr;
#pragma omp for schedule(static)
    for (int64_t index = 0; index < groups; ++index) {
      const int64_t b0 = index * lanes, count = std::min(lanes, sizes.batch - b0);
      float* dy = sized(ws.output, Cout * dy_rows * dy_cols * lanes);
      kernels.interleave(dy, dout + b0 * out_sample, count, Cout, sizes.out_height, sizes.out_width, k - 1,
                         dy_rows, dy_cols);
      if (share != nullptr) {
        float* x = sized(ws.input, C * Hp * Wp * lanes);
        kernels.interleave(x, inp + b0 * in_sample, count, C, sizes.height, sizes.width, pad, Hp, Wp);
        kernels.filter_gradient(share, dy, x, sizes, dy_rows, dy_cols, k - 1);
      }
      if (dinp == nullptr) continue;
      float* dx = sized(ws.result, in_sample * lanes);
      kernels.convolve(dx, dy, flipped, nullptr, full);
      kernels.deinterleave(dinp + b0 * in_sample, dx, count, C, sizes.height, sizes.width);
    }
    shares[static_cast<size_t>(omp_get_thread_num())] = share;
  }
  if (dweight != nullptr) add_weight_shares(dweight, shares, filter_floats);
  if (dbias != nullptr) conv2d_bias_gradient(dbias, dout, sizes);
}

}  // namespace

bool conv2d_lanes_applies(const ConvSizes& sizes) {
  return sizes.stride == 1 && sizes.kernel >= 2 && sizes.out_plane() <= kMaxPlane &&
         sizes.in_channels * sizes.out_channels <= kMaxChannelPairs;
}

bool lanes16_runs_here() {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512;
}

void conv2d_lanes_forward(float* out, const float* inp, const float* weight, const float* bias,
                          const ConvSizes& sizes) {
  forward_in_lanes(kEightLanes, out, inp, weight, bias, sizes);
}

void conv2d_lanes_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                           const float* weight, const ConvSizes& sizes) {
  backward_in_lanes(kEightLanes, dinp, dweight, dbias, dout, inp, weight, sizes);
}

void conv2d_lanes16_forward(float* out, const float* inp, const float* weight, const float* bias,
                            const ConvSizes& sizes) {
  if (!lanes16_runs_here()) throw std::logic_error("conv2d_lanes16_forward on a CPU without AVX-512F");
  forward_in_lanes(kSixteenLanes, out, inp, weight, bias, sizes);
}

void conv2d_lanes16_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                             const float* weight, const ConvSizes& sizes) {
  if (!lanes16_runs_here()) throw std::logic_error("conv2d_lanes16_backward on a CPU without AVX-512F");
  backward_in_lanes(kSixteenLanes, dinp, dweight, dbias, dout, inp, weight, sizes);
}

}  // namespace dtbench
