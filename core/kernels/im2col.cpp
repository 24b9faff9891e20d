#include "core/kernels/im2col.h"

#include <algorithm>

namespace dtbench {

namespace {

// The output columns [begin, end) whose input column ow·s + offset lies inside [0, width).
struct ValidRange {
  int64_t begin;
  int64_t end;
};

ValidRange valid_columns(int64_t offset, int64_t stride, int64_t width, int64_t out_width) {
  // ow·s + offset >= 0       <=>  ow >= ceil(−offset / s)
  // ow·s + offset <= W − 1   <=>  ow <= floor((W − 1 − offset) / s)
  const int64_t begin = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const int64_t last = width - 1 - offset;
  const int64_t end = last < 0 ? 0 : std::min(out_width, last / stride + 1);
  return {std::min(begin, end), end};
}

}  // namespace

void im2col(float* col, const float* inp, const ConvSizes& sizes, int64_t col_stride) {
  const int64_t k = sizes.kernel, s = sizes.stride, pad = sizes.padding;
  const int64_t H = sizes.height, W = sizes.width, Ho = sizes.out_height, Wo = sizes.out_width;
  for (int64_t c = 0; c < sizes.in_channels; ++c) {
    const float* plane = inp + c * H * W;  // (H, W)
    for (int64_t ki = 0; ki < k; ++ki) {
      for (int64_t kj = 0; kj < k; ++kj) {
        float* row = col + ((c * k + ki) * k + kj) * col_stride;  // (Ho, Wo) of this (c, ki, kj)
        const int64_t offset = kj - pad;
        const ValidRange valid = valid_columns(offset, s, W, Wo);
        for (int64_t oh = 0; oh < Ho; ++oh) {
          float* out = row + oh * Wo;  // (Wo)
          const int64_t ih = oh * s - pad + ki;
          if (ih < 0 || ih >= H) {
            std::fill_n(out, Wo, 0.0f);
            continue;
          }
          const float* src = plane + ih * W;  // (W): input row ih
          std::fill_n(out, valid.begin, 0.0f);
          if (s == 1) {
            std::copy(src + valid.begin + offset, src + valid.end + offset, out + valid.begin);
          } else {
            for (int64_t ow = valid.begin; ow < valid.end; ++ow) out[ow] = src[ow * s + offset];
          }
          std::fill(out + valid.end, out + Wo, 0.0f);
        }
      }
    }
  }
}

void col2im(float* dinp, const float* col, const ConvSizes& sizes, int64_t col_stride) {
  const int64_t k = sizes.kernel, s = sizes.stride, pad = sizes.padding;
  const int64_t H = sizes.height, W = sizes.width, Ho = sizes.out_height, Wo = sizes.out_width;
  for (int64_t c = 0; c < sizes.in_channels; ++c) {
    float* plane = dinp + c * H * W;  // (H, W)
    for (int64_t ki = 0; ki < k; ++ki) {
      for (int64_t kj = 0; kj < k; ++kj) {
        const float* row = col + ((c * k + ki) * k + kj) * col_stride;  // (Ho, Wo)
        const int64_t offset = kj - pad;
        const ValidRange valid = valid_columns(offset, s, W, Wo);
        for (int64_t oh = 0; oh < Ho; ++oh) {
          const int64_t ih = oh * s - pad + ki;
          if (ih < 0 || ih >= H) continue;
          const float* in = row + oh * Wo;       // (Wo)
          float* dst = plane + ih * W;           // (W): input row ih
          if (s == 1) {
            float* to = dst + valid.begin + offset;  // (valid count)
            const float* from = in + valid.begin;    // (valid count)
            for (int64_t i = 0; i < valid.end - valid.begin; ++i) to[i] += from[i];
          } else {
            for (int64_t ow = valid.begin; ow < valid.end; ++ow) dst[ow * s + offset] += in[ow];
          }
        }
      }
    }
  }
}

}  // namespace dtbench
