#include "core/kernels/im2col.h"

#include <algorithm>
#include <vector>

#include "core/kernels/vec8.h"

namespace dtbench {

// Two ways to unroll, chosen per shape:
//  - by rows: for each (c, ki, kj) and output row, one copy of the row's valid part (contiguous
//    when the stride is 1) plus zeros for the padding. Fast when rows are long.
//  - by table: the plane is first copied into a zero-bordered (H + 2·pad, W + 2·pad) plane; then
//    every (c, ki, kj) row of col is a gather through one table of offsets, offset[p] =
//    oh·s·Wp + ow·s, with no bounds checks. Rows of 4 or 8 floats (ResNet's deep layers) would
//    otherwise spend their time in per-row call overhead: about 4x faster on 4x4 planes. At
//    stride 1 each output row is Wo consecutive floats of the padded plane, so rows are copied
//    as one or two vectors instead (LeNet-5's 10x10 outputs: its step 5.3 -> 5.0 ms, best of 300).
// col2im mirrors each, the table form accumulating into a padded plane and copying its interior.

namespace {

// Rows shorter than this are unrolled by table.
constexpr int64_t kMinRowWidth = 16;

bool use_table(const ConvSizes& sizes) { return sizes.out_width < kMinRowWidth; }

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

// Scratch for the table form, grow-only, one per thread.
struct TableScratch {
  std::vector<float> plane;     // (Hp, Wp): one zero-bordered input plane
  std::vector<int64_t> offset;  // (Ho·Wo): where output pixel p's window starts in the plane
};

TableScratch& prepare_table(const ConvSizes& sizes) {
  thread_local TableScratch scratch;
  const int64_t Hp = sizes.height + 2 * sizes.padding, Wp = sizes.width + 2 * sizes.padding;
  scratch.plane.resize(static_cast<size_t>(Hp * Wp));  // vectors keep their capacity
  if (sizes.stride == 1) return scratch;  // stride-1 rows are copied whole, with no table
  scratch.offset.resize(static_cast<size_t>(sizes.out_plane()));
  for (int64_t oh = 0; oh < sizes.out_height; ++oh) {
    for (int64_t ow = 0; ow < sizes.out_width; ++ow) {
      scratch.offset[static_cast<size_t>(oh * sizes.out_width + ow)] =
          oh * sizes.stride * Wp + ow * sizes.stride;
    }
  }
  return scratch;
}

void im2col_rows(float* col, const float* inp, const ConvSizes& sizes, int64_t col_stride) {
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

void col2im_rows(float* dinp, const float* col, const ConvSizes& sizes, int64_t col_stride) {
  const int64_t k = sizes.kernel, s = sizes.stride, pad = sizes.padding;
  const int64_t H = sizes.height, W = sizes.width, Ho = sizes.out_height, Wo = sizes.out_width;
  for (int64_t c = 0; c < sizes.in_channels; ++c) {
    float* plane = dinp + c * H * W;  // (H, W)
    std::fill_n(plane, H * W, 0.0f);
    for (int64_t ki = 0; ki < k; ++ki) {
      for (int64_t kj = 0; kj < k; ++kj) {
        const float* row = col + ((c * k + ki) * k + kj) * col_stride;  // (Ho, Wo)
        const int64_t offset = kj - pad;
        const ValidRange valid = valid_columns(offset, s, W, Wo);
        for (int64_t oh = 0; oh < Ho; ++oh) {
          const int64_t ih = oh * s - pad + ki;
          if (ih < 0 || ih >= H) continue;
          const float* in = row + oh * Wo;  // (Wo)
          float* dst = plane + ih * W;      // (W): input row ih
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

// to[0, n) = from[0, n) for the short rows of the table form (n < 16): the first 8 and the last 8
// as two vectors, overlapping, where a call to memcpy or a scalar loop per row would cost more
// than the copy.
inline void copy_short(float* to, const float* from, int64_t n) {
  if (n < 8) {
    for (int64_t i = 0; i < n; ++i) to[i] = from[i];
    return;
  }
  const vec8::Vec8 head = vec8::load(from), tail = vec8::load(from + n - 8);
  for (int64_t i = 8; i + 8 < n; i += 8) vec8::store(to + i, vec8::load(from + i));
  vec8::store(to, head);
  vec8::store(to + n - 8, tail);
}

void im2col_table(float* col, const float* inp, const ConvSizes& sizes, int64_t col_stride) {
  const int64_t k = sizes.kernel, pad = sizes.padding, P = sizes.out_plane();
  const int64_t H = sizes.height, W = sizes.width, Wp = W + 2 * pad;
  TableScratch& scratch = prepare_table(sizes);
  float* padded = scratch.plane.data();           // (Hp, Wp), border zero
  const int64_t* offset = scratch.offset.data();  // (P)
  std::fill_n(padded, (H + 2 * pad) * Wp, 0.0f);
  for (int64_t c = 0; c < sizes.in_channels; ++c) {
    const float* plane = inp + c * H * W;  // (H, W)
    for (int64_t ih = 0; ih < H; ++ih) {
      std::copy_n(plane + ih * W, W, padded + (ih + pad) * Wp + pad);
    }
    for (int64_t ki = 0; ki < k; ++ki) {
      for (int64_t kj = 0; kj < k; ++kj) {
        float* row = col + ((c * k + ki) * k + kj) * col_stride;  // (P)
        const float* window = padded + ki * Wp + kj;  // pixel p reads window[offset[p]]
        if (sizes.stride == 1) {
          // Output row oh reads Wo consecutive floats: a short copy, not a gather.
          for (int64_t oh = 0; oh < sizes.out_height; ++oh) {
            copy_short(row + oh * sizes.out_width, window + oh * Wp, sizes.out_width);
          }
        } else {
          for (int64_t p = 0; p < P; ++p) row[p] = window[offset[p]];
        }
      }
    }
  }
}

void col2im_table(float* dinp, const float* col, const ConvSizes& sizes, int64_t col_stride) {
  const int64_t k = sizes.kernel, pad = sizes.padding, stride = sizes.stride, P = sizes.out_plane();
  const int64_t Ho = sizes.out_height, Wo = sizes.out_width;
  const int64_t H = sizes.height, W = sizes.width, Wp = W + 2 * pad;
  TableScratch& scratch = prepare_table(sizes);
  float* padded = scratch.plane.data();           // (Hp, Wp)
  const int64_t* offset = scratch.offset.data();  // (P)
  for (int64_t c = 0; c < sizes.in_channels; ++c) {
    std::fill_n(padded, (H + 2 * pad) * Wp, 0.0f);
    for (int64_t ki = 0; ki < k; ++ki) {
      for (int64_t kj = 0; kj < k; ++kj) {
        const float* row = col + ((c * k + ki) * k + kj) * col_stride;  // (Ho, Wo)
        float* window = padded + ki * Wp + kj;  // pixel p adds to window[offset[p]]
        if (stride == 1) {
          // Output row oh adds onto Wo consecutive floats: a short vector add, not a scatter.
          for (int64_t oh = 0; oh < Ho; ++oh) {
            float* to = window + oh * Wp;       // (Wo)
            const float* from = row + oh * Wo;  // (Wo)
            for (int64_t ow = 0; ow < Wo; ++ow) to[ow] += from[ow];
          }
        } else {
          for (int64_t p = 0; p < P; ++p) window[offset[p]] += row[p];
        }
      }
    }
    float* plane = dinp + c * H * W;  // (H, W)
    for (int64_t ih = 0; ih < H; ++ih) {
      std::copy_n(padded + (ih + pad) * Wp + pad, W, plane + ih * W);
    }
  }
}

}  // namespace

void im2col(float* col, const float* inp, const ConvSizes& sizes, int64_t col_stride) {
  if (use_table(sizes)) {
    im2col_table(col, inp, sizes, col_stride);
  } else {
    im2col_rows(col, inp, sizes, col_stride);
  }
}

void col2im(float* dinp, const float* col, const ConvSizes& sizes, int64_t col_stride) {
  if (use_table(sizes)) {
    col2im_table(dinp, col, sizes, col_stride);
  } else {
    col2im_rows(dinp, col, sizes, col_stride);
  }
}

}  // namespace dtbench
