#include "core/kernels/pool_2d.h"

#include <algorithm>

#include "core/util/blas.h"

namespace dtbench {

namespace {

// Planes are shared among the threads (the BLAS setting, the project's one thread knob) once a
// call has at least this many input floats: below, starting the threads costs more than it saves.
constexpr int64_t kMinParallelFloats = int64_t{1} << 16;

int plane_threads(int64_t P, int64_t plane_floats) {
  if (P * plane_floats < kMinParallelFloats) return 1;
  return static_cast<int>(std::clamp<int64_t>(blas::threads(), 1, P));
}

// The 2x2 stride-2 window (LeNet's, VGG's) without branches: the comparisons become selects, where
// the general loop's branches mispredicted about every other window on real activations.
void maxpool_2x2(float* y, int32_t* at, const float* x, int64_t W, int64_t Ho, int64_t Wo) {
  for (int64_t oh = 0; oh < Ho; ++oh) {
    const float* top = x + 2 * oh * W;  // (W): window rows 2·oh and 2·oh + 1
    const float* bottom = top + W;
    for (int64_t ow = 0; ow < Wo; ++ow) {
      const int64_t i = 2 * ow;
      const int32_t first = static_cast<int32_t>(2 * oh * W + i);
      float best = top[i];
      int32_t index = first;
      // Strictly greater, in window order: the first maximum wins ties, as in the general loop.
      index = top[i + 1] > best ? first + 1 : index;
      best = std::max(best, top[i + 1]);
      index = bottom[i] > best ? first + static_cast<int32_t>(W) : index;
      best = std::max(best, bottom[i]);
      index = bottom[i + 1] > best ? first + static_cast<int32_t>(W) + 1 : index;
      best = std::max(best, bottom[i + 1]);
      y[oh * Wo + ow] = best;
      at[oh * Wo + ow] = index;
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
                        int64_t H, int64_t W, int64_t Ho, int64_t Wo) {
  const int threads = plane_threads(P, H * W);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t plane = 0; plane < P; ++plane) {
    float* dx = dinp + plane * H * W;              // (H, W)
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
