#pragma once
// The transforms of Winograd's minimal filtering F(2x2, 3x3) (Lavin & Gray 2016), tile by tile.
// A 3x3 stride-1 convolution's output is cut into 2x2 tiles; tile (ty, tx) reads the 4x4 input
// window at (2·ty − pad, 2·tx − pad). With
//   Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1],  G = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1],
//   Aᵀ = [1 1 1 0; 0 1 −1 −1],
// a tile of output is Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d Bᵀᵀ)] A: 16 products where the direct form needs 36.
// Summed over input channels, each of the 16 positions ξ becomes one matrix product
//   M[ξ] (Cout, T) = U[ξ] (Cout, C) · V[ξ] (C, T)
// over the T tiles of a group of samples. The backward passes are the adjoints of the same maps:
//   dM = A dY Aᵀ per tile;  dV[ξ] = U[ξ]ᵀ · dM[ξ], scattered back through d = B dV Bᵀ;
//   dU[ξ] = dM[ξ] · V[ξ]ᵀ, and dg = Gᵀ dU G.
// Transformed arrays are position-major: X[ξ] is a (rows, T) matrix at X + ξ·position_stride(rows,
// T), and a group's tiles are numbered image by image, then row by row (t = image·tiles +
// ty·columns + tx).
#include <cstdint>

#include "core/kernels/im2col.h"

namespace dtbench::winograd {

constexpr int64_t kPositions = 16;  // a 4x4 transformed tile

// Floats from X[ξ] to X[ξ + 1]: rows·T and a little more. A tile's 16 values go to (or come from)
// 16 matrices; were those rows·T floats apart, a power of two such as 64·512, all 16 addresses
// would fall into one cache set and evict each other (measured: the transforms ran several times
// slower). Two cache lines more per matrix spread them over different sets.
inline int64_t position_stride(int64_t rows, int64_t T) { return rows * T + 32; }

// How an output plane (Ho, Wo) is cut into 2x2 tiles; odd sizes get a last tile half outside.
struct TileGrid {
  int64_t rows = 0;     // ⌈Ho / 2⌉
  int64_t columns = 0;  // ⌈Wo / 2⌉
  int64_t per_image() const { return rows * columns; }
};

TileGrid tile_grid(const ConvSizes& sizes);

// U (16, Cout, C) = G g Gᵀ for every filter of weight (Cout, C, 3, 3), the filters shared among
// `threads` threads (262,144 filters in a 512-channel layer).
void transform_filters(float* U, const float* weight, int64_t out_channels, int64_t in_channels,
                       int threads);

// weight (Cout, C, 3, 3) = Gᵀ dU G: the adjoint of transform_filters, written. dU as U.
void untransform_filter_gradient(float* dweight, const float* dU, int64_t out_channels,
                                 int64_t in_channels, int threads);

// V (16, C, T) columns [t0, t0 + tiles) = Bᵀ d B for one sample inp (C, H, W); windows reaching
// past the plane read zeros. T is V's row length.
void transform_input(float* V, int64_t T, int64_t t0, const float* inp, const ConvSizes& sizes);

// out (Cout, Ho, Wo) of one sample = Aᵀ M A from M (16, Cout, T) columns [t0, ...), plus bias
// (Cout) unless nullptr; written.
void inverse_output(float* out, const float* M, int64_t T, int64_t t0, const float* bias,
                    const ConvSizes& sizes);

// dM (16, Cout, T) columns [t0, ...) = A dY Aᵀ for one sample's dout (Cout, Ho, Wo): the adjoint
// of inverse_output (entries of a half-outside tile beyond the plane count as zero).
void transform_output_gradient(float* dM, int64_t T, int64_t t0, const float* dout,
                               const ConvSizes& sizes);

// dinp (C, H, W) of one sample = the sum over tiles of B dV Bᵀ, each at its window, from dV
// (16, C, T) columns [t0, ...): the adjoint of transform_input; written.
void inverse_input_gradient(float* dinp, const float* dV, int64_t T, int64_t t0,
                            const ConvSizes& sizes);

}  // namespace dtbench::winograd
