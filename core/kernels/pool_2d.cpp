#include "core/kernels/pool_2d.h"

#include <algorithm>

#include "core/kernels/target_clones.h"
#include "core/kernels/vec8.h"
#include "core/util/blas.h"

// Built for AVX2 + FMA and for the baseline, the loader picking one (as in conv_direct.cpp).
#define DTB_CLONES DTB_TARGET_CLONES("fma", "default")

namespace dtbench {

namespace {

// Planes are shared among the threads (the BLAS setting, the project's one thread knob) once a
// call has at least this many input floats: below, starting the threads costs more than it saves.
constexpr int64_t kMinParallelFloats = int64_t{1} << 16;

int plane_threads(int64_t P, int64_t plane_floats) {
  if (P * plane_floats < kMinParallelFloats) return 1;
  return static_cast<int>(std::clamp<int64_t>(blas::threads(), 1, P));
}

using vec8::Index8;
using vec8::Vec8;

// One output row of 2x2 stride-2 windows, eight at a time from output column ow on: the window
// rows are `top` and `bottom`, `first` the plane index of top[0]. Computing a window twice gives
// the same result, so a row of 8 or more ends with the last eight windows (overlapping the
// previous eight) instead of single ones.
struct WindowRow {
  const float* top;
  const float* bottom;
  int32_t first;
  int32_t below;  // W: from a top-row element to the one under it
};

// The 2x2 stride-2 window (LeNet's, VGG's) without branches: the comparisons become selects, where
// the general loop's branches mispredicted about every other window on real activations. Eight
// windows at a time (the even and odd columns of 16 floats).
DTB_VEC8_INLINE void max_of_8_windows(float* y, int32_t* at, const WindowRow& row, int64_t ow) {
  const Index8 first = row.first + 2 * static_cast<int32_t>(ow) + Index8{0, 2, 4, 6, 8, 10, 12, 14};
  // Strictly greater, in window order: the first maximum wins ties, as in the general loop.
  Vec8 best = vec8::evens(row.top + 2 * ow);
  Index8 index = first;
  const Vec8 candidates[3] = {vec8::odds(row.top + 2 * ow), vec8::evens(row.bottom + 2 * ow),
                              vec8::odds(row.bottom + 2 * ow)};
  const int32_t offsets[3] = {1, row.below, row.below + 1};
  for (int n = 0; n < 3; ++n) {
    const Index8 greater = candidates[n] > best;
    index = greater ? first + offsets[n] : index;
    best = greater ? candidates[n] : best;
  }
  vec8::store(y + ow, best);
  *reinterpret_cast<vec8::Index8Unaligned*>(at + ow) = index;
}

// The same for a single window.
DTB_VEC8_INLINE void max_of_window(float* y, int32_t* at, const WindowRow& row, int64_t ow) {
  const float* top = row.top + 2 * ow;
  const float* bottom = row.bottom + 2 * ow;
  const int32_t first = row.first + 2 * static_cast<int32_t>(ow);
  float best = top[0];
  int32_t index = first;
  index = top[1] > best ? first + 1 : index;
  best = std::max(best, top[1]);
  index = bottom[0] > best ? first + row.below : index;
  best = std::max(best, bottom[0]);
  index = bottom[1] > best ? first + row.below + 1 : index;
  best = std::max(best, bottom[1]);
  y[ow] = best;
  at[ow] = index;
}

DTB_CLONES void maxpool_2x2(float* y, int32_t* at, const float* x, int64_t W, int64_t Ho, int64_t Wo) {
  for (int64_t oh = 0; oh < Ho; ++oh) {
    const WindowRow row{x + 2 * oh * W, x + (2 * oh + 1) * W, static_cast<int32_t>(2 * oh * W),
                        static_cast<int32_t>(W)};
    float* y_row = y + oh * Wo;
    int32_t* at_row = at + oh * Wo;
    int64_t ow = 0;
    for (; ow + 8 <= Wo; ow += 8) max_of_8_windows(y_row, at_row, row, ow);
    if (ow < Wo && Wo >= 8) {
      max_of_8_windows(y_row, at_row, row, Wo - 8);
    } else {
      for (; ow < Wo; ++ow) max_of_window(y_row, at_row, row, ow);
    }
  }
}

// The backward of eight windows from output column ow on: each of their 32 input elements gets
// the window's gradient where it was the maximum, zero elsewhere.
DTB_VEC8_INLINE void window_gradients_8(float* top, float* bottom, const float* dy, const int32_t* at,
                                        int32_t first, int32_t below, int64_t ow) {
  const Vec8 g = vec8::load(dy + ow);
  // Offsets within the window as floats (exact: planes are far below 2^24 elements): the AVX clone
  // has 8-wide float compares and selects, not 8-wide integer ones (AVX2).
  const Index8 index = *reinterpret_cast<const vec8::Index8Unaligned*>(at + ow);
  const Vec8 offset = __builtin_convertvector(index, Vec8) -
                      (static_cast<float>(first + 2 * ow) + Vec8{0, 2, 4, 6, 8, 10, 12, 14});
  const Vec8 zero = {};
  const float right = 1.0f, under = static_cast<float>(below), under_right = under + 1.0f;
  vec8::store_interleaved(top + 2 * ow, offset == 0.0f ? g : zero, offset == right ? g : zero);
  vec8::store_interleaved(bottom + 2 * ow, offset == under ? g : zero, offset == under_right ? g : zero);
}

// The backward of maxpool_2x2 when its windows tile the plane (H and W even): each input element
// lies in exactly one window, so it is written once, the gradient or zero, with no clearing pass
// and no scattered additions.
DTB_CLONES void maxpool_2x2_backward(float* dx, const float* dy, const int32_t* at, int64_t W,
                                     int64_t Ho, int64_t Wo) {
  const int32_t below = static_cast<int32_t>(W);
  for (int64_t oh = 0; oh < Ho; ++oh) {
    float* top = dx + 2 * oh * W;  // (W)
    float* bottom = top + W;
    const int32_t first = static_cast<int32_t>(2 * oh * W);
    const float* dy_row = dy + oh * Wo;
    const int32_t* at_row = at + oh * Wo;
    int64_t ow = 0;
    for (; ow + 8 <= Wo; ow += 8) window_gradients_8(top, bottom, dy_row, at_row, first, below, ow);
    if (ow < Wo && Wo >= 8) {
      window_gradients_8(top, bottom, dy_row, at_row, first, below, Wo - 8);
      continue;
    }
    for (; ow < Wo; ++ow) {
      const float g = dy_row[ow];
      const int32_t offset = at_row[ow] - first - static_cast<int32_t>(2 * ow);
      top[2 * ow] = offset == 0 ? g : 0.0f;
      top[2 * ow + 1] = offset == 1 ? g : 0.0f;
      bottom[2 * ow] = offset == below ? g : 0.0f;
      bottom[2 * ow + 1] = offset == below + 1 ? g : 0.0f;
    }
  }
}

}  // namespace

void maxpool2d_forward(float* out, int32_t* argmax, const float* inp, int64_t P, int64_t H,
                       int64_t W, int64_t k, int64_t s, int64_t Ho, int64_t Wo) {
  const int threads = plane_threads(P, H * W);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t plane = 0; plane < P; ++plane) {
    if (k == 2 && s == 2) {
      maxpool_2x2(out + plane * Ho * Wo, argmax + plane * Ho * Wo, inp + plane * H * W, W, Ho, Wo);
      continue;
    }
    const float* x = inp + plane * H * W;   // (H, W)
    float* y = out + plane * Ho * Wo;       // (Ho, Wo)
    int32_t* at = argmax + plane * Ho * Wo;  // (Ho, Wo)
    for (int64_t oh = 0; oh < Ho; ++oh) {
      for (int64_t ow = 0; ow < Wo; ++ow) {
        int64_t best_index = oh * s * W + ow * s;
        float best = x[best_index];
        for (int64_t ki = 0; ki < k; ++ki) {
          const int64_t row = (oh * s + ki) * W + ow * s;
          for (int64_t kj = 0; kj < k; ++kj) {
            if (x[row + kj] > best) {
              best = x[row + kj];
              best_index = row + kj;
            }
          }
        }
        y[oh * Wo + ow] = best;
        at[oh * Wo + ow] = static_cast<int32_t>(best_index);
      }
    }
  }
}

void maxpool2d_backward(float* dinp, const float* dout, const int32_t* argmax, int64_t P,
                        int64_t H, int64_t W, int64_t k, int64_t s, int64_t Ho, int64_t Wo) {
  const int threads = plane_threads(P, H * W);
  const bool tiled_2x2 = k == 2 && s == 2 && H == 2 * Ho && W == 2 * Wo;  // windows tile the plane
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t plane = 0; plane < P; ++plane) {
    float* dx = dinp + plane * H * W;              // (H, W)
    if (tiled_2x2) {
      maxpool_2x2_backward(dx, dout + plane * Ho * Wo, argmax + plane * Ho * Wo, W, Ho, Wo);
      continue;
    }
    std::fill_n(dx, H * W, 0.0f);
    const float* dy = dout + plane * Ho * Wo;      // (Ho, Wo)
    const int32_t* at = argmax + plane * Ho * Wo;  // (Ho, Wo)
    for (int64_t i = 0; i < Ho * Wo; ++i) dx[at[i]] += dy[i];
  }
}

void avgpool2d_forward(float* out, const float* inp, int64_t P, int64_t H, int64_t W, int64_t k,
                       int64_t s, int64_t Ho, int64_t Wo) {
  const float scale = 1.0f / static_cast<float>(k * k);
  for (int64_t plane = 0; plane < P; ++plane) {
    const float* x = inp + plane * H * W;  // (H, W)
    float* y = out + plane * Ho * Wo;      // (Ho, Wo)
    for (int64_t oh = 0; oh < Ho; ++oh) {
      for (int64_t ow = 0; ow < Wo; ++ow) {
        float sum = 0.0f;
        for (int64_t ki = 0; ki < k; ++ki) {
          const float* row = x + (oh * s + ki) * W + ow * s;  // (k)
          for (int64_t kj = 0; kj < k; ++kj) sum += row[kj];
        }
        y[oh * Wo + ow] = sum * scale;
      }
    }
  }
}

void avgpool2d_backward(float* dinp, const float* dout, int64_t P, int64_t H, int64_t W, int64_t k,
                        int64_t s, int64_t Ho, int64_t Wo) {
  const float scale = 1.0f / static_cast<float>(k * k);
  std::fill_n(dinp, P * H * W, 0.0f);
  for (int64_t plane = 0; plane < P; ++plane) {
    float* dx = dinp + plane * H * W;          // (H, W)
    const float* dy = dout + plane * Ho * Wo;  // (Ho, Wo)
    for (int64_t oh = 0; oh < Ho; ++oh) {
      for (int64_t ow = 0; ow < Wo; ++ow) {
        const float share = dy[oh * Wo + ow] * scale;
        for (int64_t ki = 0; ki < k; ++ki) {
          float* row = dx + (oh * s + ki) * W + ow * s;  // (k)
          for (int64_t kj = 0; kj < k; ++kj) row[kj] += share;
        }
      }
    }
  }
}

void global_avgpool_forward(float* out, const float* inp, int64_t P, int64_t HW) {
  const float scale = 1.0f / static_cast<float>(HW);
  for (int64_t plane = 0; plane < P; ++plane) {
    const float* x = inp + plane * HW;  // (HW)
    float sum = 0.0f;
    for (int64_t i = 0; i < HW; ++i) sum += x[i];
    out[plane] = sum * scale;
  }
}

void global_avgpool_backward(float* dinp, const float* dout, int64_t P, int64_t HW) {
  const float scale = 1.0f / static_cast<float>(HW);
  for (int64_t plane = 0; plane < P; ++plane) {
    float* dx = dinp + plane * HW;  // (HW)
    std::fill_n(dx, HW, dout[plane] * scale);
  }
}

}  // namespace dtbench
