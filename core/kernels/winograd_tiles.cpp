#include "core/kernels/winograd_tiles.h"

#include <algorithm>
#include <vector>

#include "core/kernels/target_clones.h"
#include "core/kernels/vec8.h"
#include "core/kernels/winograd_plane.h"

// The input and output transforms and their adjoints run 8 tiles at a time in vectors, built for
// AVX2 and for the baseline, the loader picking one (the project builds without -march=native).
#define DTB_CLONES DTB_TARGET_CLONES("avx2", "default")

namespace dtbench::winograd {

namespace {

using vec8::Vec8;

// Tile windows are read from (and input gradients gather into) a zero-bordered copy of one plane,
// (2·rows + 2, 2·columns + 2) with the plane at (pad, pad).
PaddedPlane& padded_plane(const TileGrid& grid) {
  return zeroed_plane(2 * grid.rows + 2, 2 * grid.columns + 2);
}

// The 4x4 window at w (row stride `stride`) through Bᵀ · B: rows, then columns.
void input_tile(float v[16], const float* w, int64_t stride) {
  float t[4][4];
  for (int j = 0; j < 4; ++j) {
    const float d0 = w[j], d1 = w[stride + j], d2 = w[2 * stride + j], d3 = w[3 * stride + j];
    t[0][j] = d0 - d2;
    t[1][j] = d1 + d2;
    t[2][j] = d2 - d1;
    t[3][j] = d1 - d3;
  }
  for (int i = 0; i < 4; ++i) {
    v[i * 4 + 0] = t[i][0] - t[i][2];
    v[i * 4 + 1] = t[i][1] + t[i][2];
    v[i * 4 + 2] = t[i][2] - t[i][1];
    v[i * 4 + 3] = t[i][1] - t[i][3];
  }
}

// input_tile for the 8 tiles whose windows start at w, w + 2, ..., w + 14: the windows' columns
// are the even and odd floats of each row, so every product is a vector op and each of the 16
// results is 8 consecutive tiles' values, stored at v[p] + 0..7 (p = 0..15, `stride` apart).
DTB_VEC8_INLINE void input_tiles8(float* v, int64_t stride, const float* w, int64_t row_stride) {
  Vec8 t[4][4];
  Vec8 d[4][4];
  for (int r = 0; r < 4; ++r) {
    const float* row = w + r * row_stride;
    d[r][0] = vec8::evens(row);
    d[r][1] = vec8::odds(row);
    d[r][2] = vec8::evens(row + 2);
    d[r][3] = vec8::odds(row + 2);
  }
  for (int j = 0; j < 4; ++j) {
    t[0][j] = d[0][j] - d[2][j];
    t[1][j] = d[1][j] + d[2][j];
    t[2][j] = d[2][j] - d[1][j];
    t[3][j] = d[1][j] - d[3][j];
  }
  for (int i = 0; i < 4; ++i) {
    vec8::store(v + (i * 4 + 0) * stride, t[i][0] - t[i][2]);
    vec8::store(v + (i * 4 + 1) * stride, t[i][1] + t[i][2]);
    vec8::store(v + (i * 4 + 2) * stride, t[i][2] - t[i][1]);
    vec8::store(v + (i * 4 + 3) * stride, t[i][1] - t[i][3]);
  }
}

// The adjoint of input_tile: adds B v Bᵀ onto the 4x4 window at w.
void add_input_gradient_tile(float* w, int64_t stride, const float v[16]) {
  float t[4][4];
  for (int i = 0; i < 4; ++i) {
    const float* r = v + i * 4;
    t[i][0] = r[0];
    t[i][1] = r[1] - r[2] + r[3];
    t[i][2] = r[2] + r[1] - r[0];
    t[i][3] = -r[3];
  }
  for (int j = 0; j < 4; ++j) {
    w[j] += t[0][j];
    w[stride + j] += t[1][j] - t[2][j] + t[3][j];
    w[2 * stride + j] += t[2][j] + t[1][j] - t[0][j];
    w[3 * stride + j] -= t[3][j];
  }
}

// The output rows oh and oh + 1 (if inside Ho) of 8 whole tiles starting at column ow, from the
// 16 positions' values of those tiles at m + p·stride + 0..7, plus shift.
DTB_VEC8_INLINE void output_tiles8(float* plane, int64_t Wo, int64_t Ho, int64_t oh, int64_t ow,
                                   const float* m, int64_t stride, float shift) {
  Vec8 s[2][4];  // Aᵀ m
  for (int j = 0; j < 4; ++j) {
    const Vec8 m0 = vec8::load(m + j * stride), m1 = vec8::load(m + (4 + j) * stride);
    const Vec8 m2 = vec8::load(m + (8 + j) * stride), m3 = vec8::load(m + (12 + j) * stride);
    s[0][j] = m0 + m1 + m2;
    s[1][j] = m1 - m2 - m3;
  }
  const Vec8 offset = vec8::broadcast(shift);
  for (int i = 0; i < 2 && oh + i < Ho; ++i) {  // (Aᵀ m) A
    vec8::store_interleaved(plane + (oh + i) * Wo + ow, s[i][0] + s[i][1] + s[i][2] + offset,
                            s[i][1] - s[i][2] - s[i][3] + offset);
  }
}

// A y Aᵀ of a tile's output gradient y (y[i][b]: row i, column b), its 16 positions in order: of one
// tile (float) or of 8 tiles side by side (Vec8).
template <typename T>
DTB_VEC8_INLINE void output_gradient_transform(const T (&y)[2][2], T (&m)[16]) {
  T r[4][2];  // A y
  for (int b = 0; b < 2; ++b) {
    r[0][b] = y[0][b];
    r[1][b] = y[0][b] + y[1][b];
    r[2][b] = y[0][b] - y[1][b];
    r[3][b] = -y[1][b];
  }
  for (int i = 0; i < 4; ++i) {  // (A y) Aᵀ
    m[i * 4 + 0] = r[i][0];
    m[i * 4 + 1] = r[i][0] + r[i][1];
    m[i * 4 + 2] = r[i][0] - r[i][1];
    m[i * 4 + 3] = -r[i][1];
  }
}

// The adjoint of output_tiles8 for the 8 whole tiles starting at column ow of output rows oh and
// oh + 1 (row oh + 1 counting as zero past Ho): A dY Aᵀ of each tile, its 16 positions' values
// stored at m + p·stride + 0..7.
DTB_VEC8_INLINE void output_gradient_tiles8(float* m, int64_t stride, const float* plane, int64_t Wo, int64_t Ho,
                                            int64_t oh, int64_t ow) {
  Vec8 y[2][2] = {};  // y[i][b]: output row oh + i, tile column b, of the 8 tiles
  for (int i = 0; i < 2 && oh + i < Ho; ++i) {
    y[i][0] = vec8::evens(plane + (oh + i) * Wo + ow);
    y[i][1] = vec8::odds(plane + (oh + i) * Wo + ow);
  }
  Vec8 transformed[16];
  output_gradient_transform(y, transformed);
  for (int p = 0; p < 16; ++p) vec8::store(m + p * stride, transformed[p]);
}

// at[0..16) += a0 b0 a1 b1 ... a7 b7.
DTB_VEC8_INLINE void add_interleaved(float* at, Vec8 a, Vec8 b) {
  const vec8::Index8 low{0, 8, 1, 9, 2, 10, 3, 11}, high{4, 12, 5, 13, 6, 14, 7, 15};
  vec8::store(at, vec8::load(at) + __builtin_shuffle(a, b, low));
  vec8::store(at + 8, vec8::load(at + 8) + __builtin_shuffle(a, b, high));
}

// add_input_gradient_tile for the 8 tiles whose windows start at w, w + 2, ..., w + 14, their 16
// values at v + p·stride + 0..7. Neighbouring windows share two columns, so each window row is
// added in two passes: its columns 0 and 1 (the even and odd floats from w), then 2 and 3 (from
// w + 2) — a shared float gets both tiles' terms, one pass after the other.
DTB_VEC8_INLINE void add_input_gradient_tiles8(float* w, int64_t row_stride, const float* v, int64_t stride) {
  Vec8 t[4][4];
  for (int i = 0; i < 4; ++i) {
    const Vec8 r0 = vec8::load(v + (i * 4 + 0) * stride), r1 = vec8::load(v + (i * 4 + 1) * stride);
    const Vec8 r2 = vec8::load(v + (i * 4 + 2) * stride), r3 = vec8::load(v + (i * 4 + 3) * stride);
    t[i][0] = r0;
    t[i][1] = r1 - r2 + r3;
    t[i][2] = r2 + r1 - r0;
    t[i][3] = -r3;
  }
  for (int j = 0; j < 4; j += 2) {
    add_interleaved(w + j, t[0][j], t[0][j + 1]);
    add_interleaved(w + row_stride + j, t[1][j] - t[2][j] + t[3][j], t[1][j + 1] - t[2][j + 1] + t[3][j + 1]);
    add_interleaved(w + 2 * row_stride + j, t[2][j] + t[1][j] - t[0][j], t[2][j + 1] + t[1][j + 1] - t[0][j + 1]);
    add_interleaved(w + 3 * row_stride + j, -t[3][j], -t[3][j + 1]);
  }
}

// input_tiles8 along one row of tiles, as far as whole groups of 8 go (the padded row holds
// 2·columns + 2 floats); returns how many tiles it did. Only these loops are built per CPU: the
// per-tile remainder ran several times slower as an AVX2 clone on small planes.
DTB_CLONES int64_t input_tiles_by_8(float* v, int64_t stride, const float* window_row,
                                    int64_t row_stride, int64_t columns) {
  int64_t tx = 0;
  for (; tx + 8 <= columns; tx += 8) input_tiles8(v + tx, stride, window_row + 2 * tx, row_stride);
  return tx;
}

// output_tiles8 along one row of tiles, as far as groups of 8 whole tiles go; returns how many
// tiles it did.
DTB_CLONES int64_t output_tiles_by_8(float* plane, int64_t Wo, int64_t Ho, int64_t oh,
                                     const float* m, int64_t stride, float shift) {
  int64_t tx = 0;
  for (; 2 * (tx + 8) <= Wo; tx += 8) output_tiles8(plane, Wo, Ho, oh, 2 * tx, m + tx, stride, shift);
  return tx;
}

// output_gradient_tiles8 along one row of tiles, as far as groups of 8 whole tiles go; returns how
// many tiles it did.
DTB_CLONES int64_t output_gradient_tiles_by_8(float* m, int64_t stride, const float* plane, int64_t Wo, int64_t Ho,
                                              int64_t oh) {
  int64_t tx = 0;
  for (; 2 * (tx + 8) <= Wo; tx += 8) output_gradient_tiles8(m + tx, stride, plane, Wo, Ho, oh, 2 * tx);
  return tx;
}

// add_input_gradient_tiles8 along one row of tiles (the padded row holds 2·columns + 2 floats), as
// far as whole groups of 8 go; returns how many tiles it did.
DTB_CLONES int64_t input_gradient_tiles_by_8(float* window_row, int64_t row_stride, const float* v, int64_t stride,
                                             int64_t columns) {
  int64_t tx = 0;
  for (; tx + 8 <= columns; tx += 8) add_input_gradient_tiles8(window_row + 2 * tx, row_stride, v + tx, stride);
  return tx;
}

// G g Gᵀ of the filters [f0, f0 + 8) of weight (…, 3, 3), stored at U + p·stride + f0 + 0..7: each
// tap of the eight filters gathered into a vector (they are 9 floats apart), the arithmetic done
// on vectors and each of the 16 positions stored as one.
DTB_VEC8_INLINE void transform_filters8(float* U, int64_t stride, const float* weight, int64_t f0) {
  Vec8 g[9];
  for (int j = 0; j < 9; ++j) {
    for (int l = 0; l < 8; ++l) g[j][l] = weight[(f0 + l) * 9 + j];
  }
  const Vec8 half = vec8::broadcast(0.5f);
  Vec8 t[4][3];  // G g
  for (int j = 0; j < 3; ++j) {
    t[0][j] = g[j];
    t[1][j] = half * (g[j] + g[3 + j] + g[6 + j]);
    t[2][j] = half * (g[j] - g[3 + j] + g[6 + j]);
    t[3][j] = g[6 + j];
  }
  for (int i = 0; i < 4; ++i) {  // (G g) Gᵀ
    vec8::store(U + (i * 4 + 0) * stride + f0, t[i][0]);
    vec8::store(U + (i * 4 + 1) * stride + f0, half * (t[i][0] + t[i][1] + t[i][2]));
    vec8::store(U + (i * 4 + 2) * stride + f0, half * (t[i][0] - t[i][1] + t[i][2]));
    vec8::store(U + (i * 4 + 3) * stride + f0, t[i][2]);
  }
}

// transform_filters8, built per CPU (the loader picking the clone).
DTB_CLONES void transform_eight_filters(float* U, int64_t stride, const float* weight, int64_t f0) {
  transform_filters8(U, stride, weight, f0);
}

}  // namespace

TileGrid tile_grid(const ConvSizes& sizes) {
  return {.rows = (sizes.out_height + 1) / 2, .columns = (sizes.out_width + 1) / 2};
}

void transform_filters(float* U, const float* weight, int64_t out_channels, int64_t in_channels,
                       int threads) {
  const int64_t filters = out_channels * in_channels;
  const int64_t stride = position_stride(out_channels, in_channels);
  // Whole groups of eight filters in vectors, shared among the threads; the few left one by one.
  const int64_t groups = filters / 8;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t group = 0; group < groups; ++group) transform_eight_filters(U, stride, weight, 8 * group);
  for (int64_t f = 8 * groups; f < filters; ++f) {
    const float* g = weight + f * 9;  // (3, 3)
    float t[4][3];                    // G g
    for (int j = 0; j < 3; ++j) {
      t[0][j] = g[j];
      t[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
      t[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
      t[3][j] = g[6 + j];
    }
    for (int i = 0; i < 4; ++i) {  // (G g) Gᵀ
      U[(i * 4 + 0) * stride + f] = t[i][0];
      U[(i * 4 + 1) * stride + f] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
      U[(i * 4 + 2) * stride + f] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
      U[(i * 4 + 3) * stride + f] = t[i][2];
    }
  }
}

void untransform_filter_gradient(float* dweight, const float* dU, int64_t out_channels,
                                 int64_t in_channels, int threads) {
  const int64_t filters = out_channels * in_channels;
  const int64_t stride = position_stride(out_channels, in_channels);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t f = 0; f < filters; ++f) {
    float u[4][4];
    for (int p = 0; p < 16; ++p) u[p / 4][p % 4] = dU[p * stride + f];
    float t[4][3];  // dU G
    for (int i = 0; i < 4; ++i) {
      t[i][0] = u[i][0] + 0.5f * (u[i][1] + u[i][2]);
      t[i][1] = 0.5f * (u[i][1] - u[i][2]);
      t[i][2] = 0.5f * (u[i][1] + u[i][2]) + u[i][3];
    }
    float* g = dweight + f * 9;  // Gᵀ (dU G)
    for (int j = 0; j < 3; ++j) {
      g[j] = t[0][j] + 0.5f * (t[1][j] + t[2][j]);
      g[3 + j] = 0.5f * (t[1][j] - t[2][j]);
      g[6 + j] = 0.5f * (t[1][j] + t[2][j]) + t[3][j];
    }
  }
}

void transform_input(float* V, int64_t T, int64_t t0, const float* inp, const ConvSizes& sizes) {
  const TileGrid grid = tile_grid(sizes);
  PaddedPlane& padded = padded_plane(grid);
  const int64_t H = sizes.height, W = sizes.width, pad = sizes.padding, Wp = padded.width;
  const int64_t stride = position_stride(sizes.in_channels, T);
  for (int64_t c = 0; c < sizes.in_channels; ++c) {
    const float* plane = inp + c * H * W;  // (H, W)
    copy_into(padded, plane, H, W, pad);
    float* row = V + c * T + t0;  // V[0][c][t0 ...]
    for (int64_t ty = 0; ty < grid.rows; ++ty) {
      int64_t tx = input_tiles_by_8(row + ty * grid.columns, stride,
                                    padded.values.data() + 2 * ty * Wp, Wp, grid.columns);
      for (; tx < grid.columns; ++tx) {
        float v[16];
        input_tile(v, padded.values.data() + 2 * ty * Wp + 2 * tx, Wp);
        float* column = row + ty * grid.columns + tx;
        for (int p = 0; p < 16; ++p) column[p * stride] = v[p];
      }
    }
  }
}

void inverse_output(float* out, const float* M, int64_t T, int64_t t0, const float* bias,
                    const ConvSizes& sizes) {
  const TileGrid grid = tile_grid(sizes);
  const int64_t Ho = sizes.out_height, Wo = sizes.out_width;
  const int64_t stride = position_stride(sizes.out_channels, T);
  for (int64_t co = 0; co < sizes.out_channels; ++co) {
    const float shift = bias != nullptr ? bias[co] : 0.0f;
    float* plane = out + co * Ho * Wo;  // (Ho, Wo)
    const float* row = M + co * T + t0;
    for (int64_t ty = 0; ty < grid.rows; ++ty) {
      int64_t tx = output_tiles_by_8(plane, Wo, Ho, 2 * ty, row + ty * grid.columns, stride, shift);
      for (; tx < grid.columns; ++tx) {
        const float* column = row + ty * grid.columns + tx;
        float s[2][4];  // Aᵀ m
        for (int j = 0; j < 4; ++j) {
          const float m0 = column[j * stride], m1 = column[(4 + j) * stride];
          const float m2 = column[(8 + j) * stride], m3 = column[(12 + j) * stride];
          s[0][j] = m0 + m1 + m2;
          s[1][j] = m1 - m2 - m3;
        }
        const int64_t oh = 2 * ty, ow = 2 * tx;
        for (int i = 0; i < 2 && oh + i < Ho; ++i) {  // (Aᵀ m) A
          float* y = plane + (oh + i) * Wo + ow;
          y[0] = s[i][0] + s[i][1] + s[i][2] + shift;
          if (ow + 1 < Wo) y[1] = s[i][1] - s[i][2] - s[i][3] + shift;
        }
      }
    }
  }
}

void transform_output_gradient(float* dM, int64_t T, int64_t t0, const float* dout,
                               const ConvSizes& sizes) {
  const TileGrid grid = tile_grid(sizes);
  const int64_t Ho = sizes.out_height, Wo = sizes.out_width;
  const int64_t stride = position_stride(sizes.out_channels, T);
  for (int64_t co = 0; co < sizes.out_channels; ++co) {
    const float* plane = dout + co * Ho * Wo;  // (Ho, Wo)
    float* row = dM + co * T + t0;
    for (int64_t ty = 0; ty < grid.rows; ++ty) {
      int64_t tx = output_gradient_tiles_by_8(row + ty * grid.columns, stride, plane, Wo, Ho, 2 * ty);
      for (; tx < grid.columns; ++tx) {
        const int64_t oh = 2 * ty, ow = 2 * tx;
        float y[2][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}};
        for (int i = 0; i < 2 && oh + i < Ho; ++i) {
          y[i][0] = plane[(oh + i) * Wo + ow];
          if (ow + 1 < Wo) y[i][1] = plane[(oh + i) * Wo + ow + 1];
        }
        float transformed[16];
        output_gradient_transform(y, transformed);
        float* column = row + ty * grid.columns + tx;
        for (int p = 0; p < 16; ++p) column[p * stride] = transformed[p];
      }
    }
  }
}

void inverse_input_gradient(float* dinp, const float* dV, int64_t T, int64_t t0,
                            const ConvSizes& sizes) {
  const TileGrid grid = tile_grid(sizes);
  PaddedPlane& padded = padded_plane(grid);
  const int64_t H = sizes.height, W = sizes.width, pad = sizes.padding, Wp = padded.width;
  const int64_t stride = position_stride(sizes.in_channels, T);
  for (int64_t c = 0; c < sizes.in_channels; ++c) {
    std::fill(padded.values.begin(), padded.values.end(), 0.0f);
    const float* row = dV + c * T + t0;
    for (int64_t ty = 0; ty < grid.rows; ++ty) {
      int64_t tx = input_gradient_tiles_by_8(padded.values.data() + 2 * ty * Wp, Wp, row + ty * grid.columns, stride,
                                             grid.columns);
      for (; tx < grid.columns; ++tx) {
        const float* column = row + ty * grid.columns + tx;
        float v[16];
        for (int p = 0; p < 16; ++p) v[p] = column[p * stride];
        add_input_gradient_tile(padded.values.data() + 2 * ty * Wp + 2 * tx, Wp, v);
      }
    }
    copy_out_of(padded, dinp + c * H * W, H, W, pad);
  }
}

}  // namespace dtbench::winograd
