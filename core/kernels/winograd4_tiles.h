#pragma once
// The transforms of Winograd's F(4x4, 3x3) (Lavin & Gray 2016), tile by tile: the output is cut
// into 4x4 tiles, tile (ty, tx) reading the 6x6 input window at (4·ty − pad, 4·tx − pad), and
//   Bᵀ = [4 0 −5 0 1 0; 0 −4 −4 1 1 0; 0 4 −4 −1 1 0; 0 −2 −1 2 1 0; 0 2 −1 −2 1 0; 0 4 0 −5 0 1],
//   G  = [¼ 0 0; −⅙ −⅙ −⅙; −⅙ ⅙ −⅙; 1⁄24 1⁄12 ⅙; 1⁄24 −1⁄12 ⅙; 0 0 1],
//   Aᵀ = [1 1 1 1 1 0; 0 1 −1 2 −2 0; 0 1 1 4 4 0; 0 1 −1 8 −8 1],
// a tile of output is Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A: 36 products where the direct form needs 144,
// against F(2x2, 3x3)'s 16 for 36 (winograd_tiles.h, whose conventions and functions these
// follow one for one: position-major transformed arrays, tiles numbered image by image, then row
// by row). The transforms' larger weights (up to 8 and 1⁄24) cost a few more bits of rounding than
// F(2x2, 3x3)'s, as cuDNN's and oneDNN's F(4x4, 3x3) do.
#include <cstdint>

#include "core/kernels/im2col.h"
#include "core/kernels/winograd_tiles.h"

namespace dtbench::winograd4 {

constexpr int64_t kPositions = 36;  // a 6x6 transformed tile

// Transformed arrays (36, rows, T) lie as F(2x2, 3x3)'s do, their matrices position_stride apart.
using winograd::position_stride;

// How an output plane (Ho, Wo) is cut into 4x4 tiles; the last may lie partly outside.
struct TileGrid {
  int64_t rows = 0;     // ⌈Ho / 4⌉
  int64_t columns = 0;  // ⌈Wo / 4⌉
  int64_t per_image() const { return rows * columns; }
};

TileGrid tile_grid(const ConvSizes& sizes);

// U (36, Cout, C) = G g Gᵀ for every filter of weight (Cout, C, 3, 3), on `threads` threads.
void transform_filters(float* U, const float* weight, int64_t out_channels, int64_t in_channels,
                       int threads);

// weight (Cout, C, 3, 3) = Gᵀ dU G: the adjoint of transform_filters, written.
void untransform_filter_gradient(float* dweight, const float* dU, int64_t out_channels,
                                 int64_t in_channels, int threads);

// V (36, C, T) columns [t0, t0 + tiles) = Bᵀ d B for one sample inp (C, H, W); windows reaching
// past the plane read zeros.
void transform_input(float* V, int64_t T, int64_t t0, const float* inp, const ConvSizes& sizes);

// out (Cout, Ho, Wo) of one sample = Aᵀ M A from M (36, Cout, T) columns [t0, ...), plus bias
// (Cout) unless nullptr; written.
void inverse_output(float* out, const float* M, int64_t T, int64_t t0, const float* bias,
                    const ConvSizes& sizes);

// dM (36, Cout, T) columns [t0, ...) = A dY Aᵀ for one sample's dout (Cout, Ho, Wo), the values
// of a tile beyond the plane counting as zero.
void transform_output_gradient(float* dM, int64_t T, int64_t t0, const float* dout,
                               const ConvSizes& sizes);

// dinp (C, H, W) of one sample = the sum over tiles of B dV Bᵀ, each at its window, from dV
// (36, C, T) columns [t0, ...); written.
void inverse_input_gradient(float* dinp, const float* dV, int64_t T, int64_t t0,
                            const ConvSizes& sizes);

}  // namespace dtbench::winograd4
