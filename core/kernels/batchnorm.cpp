#include "core/kernels/batchnorm.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/kernels/parallel_ranges.h"

namespace dtbench::kernels {

namespace {

// Per-channel sums use explicit vector accumulators (a GCC/Clang vector extension): GCC does not
// vectorise a float reduction written as a plain loop unless allowed to reorder the additions
// (-ffast-math), and a plain array of lanes comes out ~3x slower than streaming the input. Here
// the order is ours and fixed: each channel has 16 float lanes, folded into double accumulators
// whenever a lane may have summed kLaneValues values, so float error stays small whatever B·P is.
// Every other loop in this file is a plain map. Float4 is one SSE register, x86-64's baseline
// (wider vector types are lowered through memory when AVX is not enabled).
using Float4 = float __attribute__((vector_size(16)));
constexpr int kVectors = 4;               // independent addition chains per sum
constexpr int64_t kLanes = 4 * kVectors;  // floats consumed per step
constexpr int64_t kLaneValues = 256;

// Channels are processed in blocks, batch-outer within a block, so the input streams through
// memory in order while the block's accumulators stay on the stack (and in L1).
constexpr int64_t kChannelBlock = 128;

struct Sums {  // double accumulators of one channel
  double first = 0.0;
  double second = 0.0;
};

struct Lanes {  // float vector accumulators of one channel
  Float4 first[kVectors] = {};
  Float4 second[kVectors] = {};
};

// Adds lanes into sums and clears them.
void fold(Sums& sums, Lanes& lanes) {
  for (int v = 0; v < kVectors; ++v) {
    for (int lane = 0; lane < 4; ++lane) {
      sums.first += lanes.first[v][lane];
      sums.second += lanes.second[v][lane];
    }
  }
  lanes = Lanes{};
}

// How many planes of P values may be added into lanes before they must be folded.
int64_t planes_per_fold(int64_t P) {
  return std::max<int64_t>(1, kLaneValues / std::max<int64_t>(1, P / kLanes));
}

// (Σ (x − shift), Σ (x − shift)²) over x (n): whole steps of 16 into lanes, the rest into sums.
void add_shifted_sums(Lanes& lanes, Sums& sums, const float* x, float shift, int64_t n) {
  const Float4 shift4 = {shift, shift, shift, shift};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int v = 0; v < kVectors; ++v) {
      Float4 d;
      std::memcpy(&d, x + i + 4 * v, sizeof d);
      d -= shift4;
      lanes.first[v] += d;
      lanes.second[v] += d * d;
    }
  }
  for (; i < n; ++i) {
    const double d = double(x[i]) - shift;
    sums.first += d;
    sums.second += d * d;
  }
}

// (Σ dy, Σ dy · (x − mean)) over dy (n), x (n), split the same way.
void add_gradient_sums(Lanes& lanes, Sums& sums, const float* dy, const float* x, float mean,
                       int64_t n) {
  const Float4 mean4 = {mean, mean, mean, mean};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int v = 0; v < kVectors; ++v) {
      Float4 g, value;
      std::memcpy(&g, dy + i + 4 * v, sizeof g);
      std::memcpy(&value, x + i + 4 * v, sizeof value);
      lanes.first[v] += g;
      lanes.second[v] += g * (value - mean4);
    }
  }
  for (; i < n; ++i) {
    sums.first += dy[i];
    sums.second += double(dy[i]) * (double(x[i]) - mean);
  }
}

// Items per thread of parallel_ranges for loops over (B, C, P) by channels or by planes.
int64_t min_channels(int64_t B, int64_t P) {
  return kMinFloatsPerThread / std::max<int64_t>(B * P, 1) + 1;
}
int64_t min_planes(int64_t P) { return kMinFloatsPerThread / std::max<int64_t>(P, 1) + 1; }

}  // namespace

void batchnorm_forward_train(float* out, float* mean, float* var, float* inv_std, const float* inp,
                             const float* weight, const float* bias, float epsilon, int64_t B,
                             int64_t C, int64_t P) {
  const double count = double(B) * double(P);
  const int64_t fold_every = planes_per_fold(P);
  parallel_ranges(C, min_channels(B, P), [&](int64_t first, int64_t last) {
    for (int64_t c0 = first; c0 < last; c0 += kChannelBlock) {
      const int64_t c1 = std::min(last, c0 + kChannelBlock);
      // One pass, shifted by a value of each channel: Σ(x − s)² / N − (Σ(x − s) / N)² does not
      // cancel badly the way Σx² / N − mean² does when |mean| ≫ std.
      float shift[kChannelBlock];
      Sums sums[kChannelBlock];    // Σ (x − shift), Σ (x − shift)² per channel of the block
      Lanes lanes[kChannelBlock];  // the same, not yet folded into sums
      for (int64_t c = c0; c < c1; ++c) shift[c - c0] = B * P > 0 ? inp[c * P] : 0.0f;
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t c = c0; c < c1; ++c) {
          add_shifted_sums(lanes[c - c0], sums[c - c0], inp + (b * C + c) * P, shift[c - c0], P);
        }
        if ((b + 1) % fold_every == 0 || b + 1 == B) {
          for (int64_t c = c0; c < c1; ++c) fold(sums[c - c0], lanes[c - c0]);
        }
      }
      for (int64_t c = c0; c < c1; ++c) {
        const double shifted_mean = count > 0 ? sums[c - c0].first / count : 0.0;
        const double variance = std::max(
            count > 0 ? sums[c - c0].second / count - shifted_mean * shifted_mean : 0.0, 0.0);
        mean[c] = static_cast<float>(shift[c - c0] + shifted_mean);
        var[c] = static_cast<float>(variance);
        inv_std[c] = static_cast<float>(1.0 / std::sqrt(variance + epsilon));
      }
    }
  });
  batchnorm_normalize(out, inp, mean, inv_std, weight, bias, B, C, P);
}

void batchnorm_normalize(float* out, const float* inp, const float* mean, const float* inv_std,
                         const float* weight, const float* bias, int64_t B, int64_t C, int64_t P) {
  parallel_ranges(B * C, min_planes(P), [&](int64_t first, int64_t last) {
    for (int64_t plane = first; plane < last; ++plane) {
      // y = x · scale + shift, the statistics and the affine folded per channel.
      const int64_t c = plane % C;
      const float scale = weight[c] * inv_std[c];
      const float shift = bias[c] - mean[c] * scale;
      const float* x = inp + plane * P;  // (P)
      float* y = out + plane * P;        // (P)
      for (int64_t i = 0; i < P; ++i) y[i] = x[i] * scale + shift;
    }
  });
}

void batchnorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* mean, const float* inv_std,
                        const float* weight, bool batch_statistics, int64_t B, int64_t C,
                        int64_t P) {
  const int64_t fold_every = planes_per_fold(P);
  parallel_ranges(C, min_channels(B, P), [&](int64_t first, int64_t last) {
    for (int64_t c0 = first; c0 < last; c0 += kChannelBlock) {
      const int64_t c1 = std::min(last, c0 + kChannelBlock);
      Sums sums[kChannelBlock];    // Σ dy, Σ dy · (x − mean) per channel of the block
      Lanes lanes[kChannelBlock];  // the same, not yet folded into sums
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t c = c0; c < c1; ++c) {
          add_gradient_sums(lanes[c - c0], sums[c - c0], dout + (b * C + c) * P,
                            inp + (b * C + c) * P, mean[c], P);
        }
        if ((b + 1) % fold_every == 0 || b + 1 == B) {
          for (int64_t c = c0; c < c1; ++c) fold(sums[c - c0], lanes[c - c0]);
        }
      }
      for (int64_t c = c0; c < c1; ++c) {
        dbias[c] = static_cast<float>(sums[c - c0].first);
        dweight[c] = static_cast<float>(sums[c - c0].second * inv_std[c]);
      }
    }
  });
  if (dinp == nullptr) return;

  // dx = a · dy + k · (x − mean) + d per channel, with a = γ · istd and, for batch statistics,
  // d = −a · Σdy / N and k = −a · istd² · Σ dy·(x − mean) / N (the fused formula expanded, using
  // Σ dy·x̂ = istd · Σ dy·(x − mean) = dweight).
  const double count = double(B) * double(P);
  parallel_ranges(B * C, min_planes(P), [&](int64_t first, int64_t last) {
    for (int64_t plane = first; plane < last; ++plane) {
      const int64_t c = plane % C;
      const double istd = inv_std[c];
      const double a = double(weight[c]) * istd;
      const bool fused = batch_statistics && count > 0;
      const float af = static_cast<float>(a);
      const float kf = fused ? static_cast<float>(-a * istd * dweight[c] / count) : 0.0f;
      const float df = fused ? static_cast<float>(-a * dbias[c] / count) : 0.0f;
      const float m = mean[c];
      const float* dy = dout + plane * P;  // (P)
      const float* x = inp + plane * P;    // (P)
      float* dx = dinp + plane * P;        // (P)
      for (int64_t i = 0; i < P; ++i) dx[i] = af * dy[i] + kf * (x[i] - m) + df;
    }
  });
}

}  // namespace dtbench::kernels
