#include "core/kernels/winograd4_tiles.h"

#include <algorithm>
#include <vector>

#include "core/kernels/target_clones.h"
#include "core/kernels/vec8.h"
#include "core/kernels/winograd_plane.h"

// As in winograd_tiles.cpp, the transforms run 8 tiles at a time in vectors, built for AVX2 and
// the baseline; a row's last few tiles, and the filters, one at a time.
#define DTB_CLONES DTB_TARGET_CLONES("avx2", "default")

namespace dtbench::winograd4 {

namespace {

using vec8::Index8;
using vec8::Vec8;

// ---- The one-dimensional maps, on a float or on 8 tiles' floats side by side -------------------

// v = Bᵀ d.
template <typename T>
DTB_VEC8_INLINE void input_map(const T (&d)[6], T (&v)[6]) {
  v[0] = 4.0f * d[0] - 5.0f * d[2] + d[4];
  v[1] = d[3] + d[4] - 4.0f * (d[1] + d[2]);
  v[2] = d[4] - d[3] + 4.0f * (d[1] - d[2]);
  v[3] = d[4] - d[2] + 2.0f * (d[3] - d[1]);
  v[4] = d[4] - d[2] + 2.0f * (d[1] - d[3]);
  v[5] = 4.0f * d[1] - 5.0f * d[3] + d[5];
}

// d = B v, the adjoint of input_map.
template <typename T>
DTB_VEC8_INLINE void input_adjoint(const T (&v)[6], T (&d)[6]) {
  d[0] = 4.0f * v[0];
  d[1] = 4.0f * (v[2] - v[1] + v[5]) + 2.0f * (v[4] - v[3]);
  d[2] = -5.0f * v[0] - 4.0f * (v[1] + v[2]) - v[3] - v[4];
  d[3] = v[1] - v[2] + 2.0f * (v[3] - v[4]) - 5.0f * v[5];
  d[4] = v[0] + v[1] + v[2] + v[3] + v[4];
  d[5] = v[5];
}

// y = Aᵀ m.
template <typename T>
DTB_VEC8_INLINE void output_map(const T (&m)[6], T (&y)[4]) {
  const T sum12 = m[1] + m[2], diff12 = m[1] - m[2], sum34 = m[3] + m[4], diff34 = m[3] - m[4];
  y[0] = m[0] + sum12 + sum34;
  y[1] = diff12 + 2.0f * diff34;
  y[2] = sum12 + 4.0f * sum34;
  y[3] = diff12 + 8.0f * diff34 + m[5];
}

// m = A y, the adjoint of output_map.
template <typename T>
DTB_VEC8_INLINE void output_adjoint(const T (&y)[4], T (&m)[6]) {
  const T even = y[0] + y[2], odd = y[1] + y[3];
  const T even4 = y[0] + 4.0f * y[2], odd2 = 2.0f * y[1] + 8.0f * y[3];
  m[0] = y[0];
  m[1] = even + odd;
  m[2] = even - odd;
  m[3] = even4 + odd2;
  m[4] = even4 - odd2;
  m[5] = y[3];
}

// u = G g.
inline void filter_map(const float (&g)[3], float (&u)[6]) {
  u[0] = 0.25f * g[0];
  u[1] = (g[0] + g[1] + g[2]) * (-1.0f / 6.0f);
  u[2] = (g[0] - g[1] + g[2]) * (-1.0f / 6.0f);
  u[3] = g[0] * (1.0f / 24.0f) + g[1] * (1.0f / 12.0f) + g[2] * (1.0f / 6.0f);
  u[4] = g[0] * (1.0f / 24.0f) - g[1] * (1.0f / 12.0f) + g[2] * (1.0f / 6.0f);
  u[5] = g[2];
}

// g = Gᵀ u, the adjoint of filter_map.
inline void filter_adjoint(const float (&u)[6], float (&g)[3]) {
  g[0] = 0.25f * u[0] - (u[1] + u[2]) * (1.0f / 6.0f) + (u[3] + u[4]) * (1.0f / 24.0f);
  g[1] = (u[2] - u[1]) * (1.0f / 6.0f) + (u[3] - u[4]) * (1.0f / 12.0f);
  g[2] = (u[3] + u[4] - u[1] - u[2]) * (1.0f / 6.0f) + u[5];
}

// ---- The two-dimensional maps of a tile: columns, then rows -------------------------------------

// v (36, row-major 6x6) = Bᵀ d B.
template <typename T>
DTB_VEC8_INLINE void input_transform(const T (&d)[6][6], T (&v)[36]) {
  T t[6][6];  // Bᵀ d
  for (int j = 0; j < 6; ++j) {
    const T column[6] = {d[0][j], d[1][j], d[2][j], d[3][j], d[4][j], d[5][j]};
    T mapped[6];
    input_map(column, mapped);
    for (int i = 0; i < 6; ++i) t[i][j] = mapped[i];
  }
  for (int i = 0; i < 6; ++i) {
    T mapped[6];
    input_map(t[i], mapped);
    for (int j = 0; j < 6; ++j) v[i * 6 + j] = mapped[j];
  }
}

// d (6x6) = B v Bᵀ, the adjoint of input_transform.
template <typename T>
DTB_VEC8_INLINE void input_gradient_transform(const T (&v)[36], T (&d)[6][6]) {
  T t[6][6];  // B v
  for (int j = 0; j < 6; ++j) {
    const T column[6] = {v[j], v[6 + j], v[12 + j], v[18 + j], v[24 + j], v[30 + j]};
    T mapped[6];
    input_adjoint(column, mapped);
    for (int i = 0; i < 6; ++i) t[i][j] = mapped[i];
  }
  for (int i = 0; i < 6; ++i) input_adjoint(t[i], d[i]);
}

// y (4x4) = Aᵀ m A.
template <typename T>
DTB_VEC8_INLINE void output_transform(const T (&m)[36], T (&y)[4][4]) {
  T s[4][6];  // Aᵀ m
  for (int j = 0; j < 6; ++j) {
    const T column[6] = {m[j], m[6 + j], m[12 + j], m[18 + j], m[24 + j], m[30 + j]};
    T mapped[4];
    output_map(column, mapped);
    for (int i = 0; i < 4; ++i) s[i][j] = mapped[i];
  }
  for (int i = 0; i < 4; ++i) output_map(s[i], y[i]);
}

// m (36) = A dy Aᵀ, the adjoint of output_transform.
template <typename T>
DTB_VEC8_INLINE void output_gradient_transform(const T (&dy)[4][4], T (&m)[36]) {
  T r[6][4];  // A dy
  for (int j = 0; j < 4; ++j) {
    const T column[4] = {dy[0][j], dy[1][j], dy[2][j], dy[3][j]};
    T mapped[6];
    output_adjoint(column, mapped);
    for (int i = 0; i < 6; ++i) r[i][j] = mapped[i];
  }
  for (int i = 0; i < 6; ++i) {
    T mapped[6];
    output_adjoint(r[i], mapped);
    for (int j = 0; j < 6; ++j) m[i * 6 + j] = mapped[j];
  }
}

// ---- Eight tiles side by side: their windows are 4 floats apart ---------------------------------

// at[j], at[j + 4], ..., at[j + 28]: column j of the 8 windows starting at `at` (reads at[0..32)).
template <int j>
DTB_VEC8_INLINE Vec8 every_fourth(const float* at) {
  constexpr Index8 pick{j, j + 4, j + 8, j + 12, j, j, j, j};
  const Vec8 low = __builtin_shuffle(vec8::load(at), vec8::load(at + 8), pick);
  const Vec8 high = __builtin_shuffle(vec8::load(at + 16), vec8::load(at + 24), pick);
  return __builtin_shuffle(low, high, Index8{0, 1, 2, 3, 8, 9, 10, 11});
}

// The 4 columns of one row of 8 tiles, from 8 tiles' rows side by side (32 floats).
DTB_VEC8_INLINE void gather_row(const float* at, Vec8 (&columns)[4]) {
  columns[0] = every_fourth<0>(at);
  columns[1] = every_fourth<1>(at);
  columns[2] = every_fourth<2>(at);
  columns[3] = every_fourth<3>(at);
}

// The inverse of gather_row: at[0..32) = 8 tiles' rows of 4, one after the other.
DTB_VEC8_INLINE void scatter_row(float* at, const Vec8 (&columns)[4]) {
  const Vec8 p = __builtin_shuffle(columns[0], columns[1], Index8{0, 8, 1, 9, 2, 10, 3, 11});
  const Vec8 q = __builtin_shuffle(columns[2], columns[3], Index8{0, 8, 1, 9, 2, 10, 3, 11});
  const Vec8 r = __builtin_shuffle(columns[0], columns[1], Index8{4, 12, 5, 13, 6, 14, 7, 15});
  const Vec8 s = __builtin_shuffle(columns[2], columns[3], Index8{4, 12, 5, 13, 6, 14, 7, 15});
  vec8::store(at, __builtin_shuffle(p, q, Index8{0, 1, 8, 9, 2, 3, 10, 11}));
  vec8::store(at + 8, __builtin_shuffle(p, q, Index8{4, 5, 12, 13, 6, 7, 14, 15}));
  vec8::store(at + 16, __builtin_shuffle(r, s, Index8{0, 1, 8, 9, 2, 3, 10, 11}));
  vec8::store(at + 24, __builtin_shuffle(r, s, Index8{4, 5, 12, 13, 6, 7, 14, 15}));
}

// input_transform of the 8 windows at w, w + 4, ..., w + 28 (row stride `row_stride`; reads 4
// floats past the last window's 6), the 36 results stored at v + p·stride + 0..7.
DTB_VEC8_INLINE void input_tiles8(float* v, int64_t stride, const float* w, int64_t row_stride) {
  Vec8 d[6][6];
  for (int r = 0; r < 6; ++r) {
    const float* row = w + r * row_stride;
    Vec8 first[4];
    gather_row(row, first);
    for (int k = 0; k < 4; ++k) d[r][k] = first[k];
    d[r][4] = every_fourth<0>(row + 4);
    d[r][5] = every_fourth<1>(row + 4);
  }
  Vec8 transformed[36];
  input_transform(d, transformed);
  for (int p = 0; p < 36; ++p) vec8::store(v + p * stride, transformed[p]);
}

// Output rows oh .. oh + 3 (those inside Ho) of 8 whole tiles starting at column ow, from their
// 36 positions' values at m + p·stride + 0..7, plus shift.
DTB_VEC8_INLINE void output_tiles8(float* plane, int64_t Wo, int64_t Ho, int64_t oh, int64_t ow,
                                   const float* m, int64_t stride, float shift) {
  Vec8 values[36];
  for (int p = 0; p < 36; ++p) values[p] = vec8::load(m + p * stride);
  Vec8 y[4][4];
  output_transform(values, y);
  const Vec8 offset = vec8::broadcast(shift);
  for (int i = 0; i < 4 && oh + i < Ho; ++i) {
    const Vec8 row[4] = {y[i][0] + offset, y[i][1] + offset, y[i][2] + offset, y[i][3] + offset};
    scatter_row(plane + (oh + i) * Wo + ow, row);
  }
}

// The adjoint of output_tiles8: A dY Aᵀ of 8 whole tiles starting at column ow of output rows
// oh .. oh + 3 (rows past Ho counting as zero), stored at m + p·stride + 0..7.
DTB_VEC8_INLINE void output_gradient_tiles8(float* m, int64_t stride, const float* plane, int64_t Wo,
                                            int64_t Ho, int64_t oh, int64_t ow) {
  Vec8 dy[4][4] = {};
  for (int i = 0; i < 4 && oh + i < Ho; ++i) gather_row(plane + (oh + i) * Wo + ow, dy[i]);
  Vec8 transformed[36];
  output_gradient_transform(dy, transformed);
  for (int p = 0; p < 36; ++p) vec8::store(m + p * stride, transformed[p]);
}

// The adjoint of input_tiles8: adds B v Bᵀ of 8 tiles onto their windows at w, w + 4, ...
// Neighbouring windows share two columns, so each window row is added in two passes: its columns
// 0..3 (whole rows of 4 tiles side by side), then 4 and 5 (onto the next window's 0 and 1).
DTB_VEC8_INLINE void add_input_gradient_tiles8(float* w, int64_t row_stride, const float* v,
                                               int64_t stride) {
  Vec8 values[36];
  for (int p = 0; p < 36; ++p) values[p] = vec8::load(v + p * stride);
  Vec8 d[6][6];
  input_gradient_transform(values, d);
  for (int r = 0; r < 6; ++r) {
    float* row = w + r * row_stride;
    alignas(32) float first[32];
    scatter_row(first, {d[r][0], d[r][1], d[r][2], d[r][3]});
    for (int x = 0; x < 32; x += 8) vec8::store(row + x, vec8::load(row + x) + vec8::load(first + x));
    const Vec8 zero{};
    scatter_row(first, {d[r][4], d[r][5], zero, zero});
    for (int x = 0; x < 32; x += 8) {
      vec8::store(row + 4 + x, vec8::load(row + 4 + x) + vec8::load(first + x));
    }
  }
}

// The tile loops, as far as whole groups of 8 go (each returns how many tiles it did). Only these
// are built per CPU, as in winograd_tiles.cpp.
DTB_CLONES int64_t input_tiles_by_8(float* v, int64_t stride, const float* window_row,
                                    int64_t row_stride, int64_t columns) {
  int64_t tx = 0;
  for (; tx + 8 <= columns; tx += 8) input_tiles8(v + tx, stride, window_row + 4 * tx, row_stride);
  return tx;
}

DTB_CLONES int64_t output_tiles_by_8(float* plane, int64_t Wo, int64_t Ho, int64_t oh,
                                     const float* m, int64_t stride, float shift) {
  int64_t tx = 0;
  for (; 4 * (tx + 8) <= Wo; tx += 8) output_tiles8(plane, Wo, Ho, oh, 4 * tx, m + tx, stride, shift);
  return tx;
}

DTB_CLONES int64_t output_gradient_tiles_by_8(float* m, int64_t stride, const float* plane,
                                              int64_t Wo, int64_t Ho, int64_t oh) {
  int64_t tx = 0;
  for (; 4 * (tx + 8) <= Wo; tx += 8) {
    output_gradient_tiles8(m + tx, stride, plane, Wo, Ho, oh, 4 * tx);
  }
  return tx;
}

DTB_CLONES int64_t input_gradient_tiles_by_8(float* window_row, int64_t row_stride, const float* v,
                                             int64_t stride, int64_t columns) {
  int64_t tx = 0;
  for (; tx + 8 <= columns; tx += 8) {
    add_input_gradient_tiles8(window_row + 4 * tx, row_stride, v + tx, stride);
  }
  return tx;
}

// (4·rows + 2, 4·columns + 2) floats with the plane at (pad, pad) (winograd_plane.h), and 8 more:
// the vector loads of a row's last 8 windows read 2 floats past them.
winograd::PaddedPlane& padded_plane(const TileGrid& grid) {
  return winograd::zeroed_plane(4 * grid.rows + 2, 4 * grid.columns + 2, 8);
}

}  // namespace

TileGrid tile_grid(const ConvSizes& sizes) {
  return {.rows = (sizes.out_height + 3) / 4, .columns = (sizes.out_width + 3) / 4};
}

void transform_filters(float* U, const float* weight, int64_t out_channels, int64_t in_channels,
                       int threads) {
  const int64_t filters = out_channels * in_channels;
  const int64_t stride = position_stride(out_channels, in_channels);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t f = 0; f < filters; ++f) {
    const float* g = weight + f * 9;  // (3, 3)
    float t[6][3];                    // G g
    for (int j = 0; j < 3; ++j) {
      const float column[3] = {g[j], g[3 + j], g[6 + j]};
      float mapped[6];
      filter_map(column, mapped);
      for (int i = 0; i < 6; ++i) t[i][j] = mapped[i];
    }
    for (int i = 0; i < 6; ++i) {  // (G g) Gᵀ
      float mapped[6];
      filter_map(t[i], mapped);
      for (int j = 0; j < 6; ++j) U[(i * 6 + j) * stride + f] = mapped[j];
    }
  }
}

void untransform_filter_gradient(float* dweight, const float* dU, int64_t out_channels,
                                 int64_t in_channels, int threads) {
  const int64_t filters = out_channels * in_channels;
  const int64_t stride = position_stride(out_channels, in_channels);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t f = 0; f < filters; ++f) {
    float t[3][6];  // Gᵀ dU
    for (int j = 0; j < 6; ++j) {
      float column[6];
      for (int i = 0; i < 6; ++i) column[i] = dU[(i * 6 + j) * stride + f];
      float mapped[3];
      filter_adjoint(column, mapped);
      for (int k = 0; k < 3; ++k) t[k][j] = mapped[k];
    }
    float* g = dweight + f * 9;  // (Gᵀ dU) G
    for (int k = 0; k < 3; ++k) {
      float mapped[3];
      filter_adjoint(t[k], mapped);
      for (int l = 0; l < 3; ++l) g[k * 3 + l] = mapped[l];
    }
  }
}

void transform_input(float* V, int64_t T, int64_t t0, const float* inp, const ConvSizes& sizes) {
  const TileGrid grid = tile_grid(sizes);
  winograd::PaddedPlane& padded = padded_plane(grid);
  const int64_t H = sizes.height, W = sizes.width, pad = sizes.padding, Wp = padded.width;
  const int64_t stride = position_stride(sizes.in_channels, T);
  for (int64_t c = 0; c < sizes.in_channels; ++c) {
    const float* plane = inp + c * H * W;  // (H, W)
    winograd::copy_into(padded, plane, H, W, pad);
    float* row = V + c * T + t0;  // V[0][c][t0 ...]
    for (int64_t ty = 0; ty < grid.rows; ++ty) {
      const float* window_row = padded.values.data() + 4 * ty * Wp;
      int64_t tx = input_tiles_by_8(row + ty * grid.columns, stride, window_row, Wp, grid.columns);
      for (; tx < grid.columns; ++tx) {
        float d[6][6];
        for (int i = 0; i < 6; ++i) std::copy_n(window_row + i * Wp + 4 * tx, 6, d[i]);
        float v[36];
        input_transform(d, v);
        float* column = row + ty * grid.columns + tx;
        for (int p = 0; p < 36; ++p) column[p * stride] = v[p];
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
      int64_t tx = output_tiles_by_8(plane, Wo, Ho, 4 * ty, row + ty * grid.columns, stride, shift);
      for (; tx < grid.columns; ++tx) {
        const float* column = row + ty * grid.columns + tx;
        float m[36];
        for (int p = 0; p < 36; ++p) m[p] = column[p * stride];
        float y[4][4];
        output_transform(m, y);
        const int64_t oh = 4 * ty, ow = 4 * tx;
        for (int i = 0; i < 4 && oh + i < Ho; ++i) {
          for (int j = 0; j < 4 && ow + j < Wo; ++j) plane[(oh + i) * Wo + ow + j] = y[i][j] + shift;
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
      int64_t tx = output_gradient_tiles_by_8(row + ty * grid.columns, stride, plane, Wo, Ho, 4 * ty);
      for (; tx < grid.columns; ++tx) {
        const int64_t oh = 4 * ty, ow = 4 * tx;
        float dy[4][4] = {};
        for (int i = 0; i < 4 && oh + i < Ho; ++i) {
          for (int j = 0; j < 4 && ow + j < Wo; ++j) dy[i][j] = plane[(oh + i) * Wo + ow + j];
        }
        float transformed[36];
        output_gradient_transform(dy, transformed);
        float* column = row + ty * grid.columns + tx;
        for (int p = 0; p < 36; ++p) column[p * stride] = transformed[p];
      }
    }
  }
}

void inverse_input_gradient(float* dinp, const float* dV, int64_t T, int64_t t0,
                            const ConvSizes& sizes) {
  const TileGrid grid = tile_grid(sizes);
  winograd::PaddedPlane& padded = padded_plane(grid);
  const int64_t H = sizes.height, W = sizes.width, pad = sizes.padding, Wp = padded.width;
  const int64_t stride = position_stride(sizes.in_channels, T);
  for (int64_t c = 0; c < sizes.in_channels; ++c) {
    std::fill(padded.values.begin(), padded.values.end(), 0.0f);
    const float* row = dV + c * T + t0;
    for (int64_t ty = 0; ty < grid.rows; ++ty) {
      float* window_row = padded.values.data() + 4 * ty * Wp;
      int64_t tx = input_gradient_tiles_by_8(window_row, Wp, row + ty * grid.columns, stride, grid.columns);
      for (; tx < grid.columns; ++tx) {
        const float* column = row + ty * grid.columns + tx;
        float v[36];
        for (int p = 0; p < 36; ++p) v[p] = column[p * stride];
        float d[6][6];
        input_gradient_transform(v, d);
        for (int i = 0; i < 6; ++i) {
          for (int j = 0; j < 6; ++j) window_row[i * Wp + 4 * tx + j] += d[i][j];
        }
      }
    }
    winograd::copy_out_of(padded, dinp + c * H * W, H, W, pad);
  }
}

}  // namespace dtbench::winograd4
