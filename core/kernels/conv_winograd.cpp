#include "core/kernels/conv_winograd.h"

#include <algorithm>
#include <vector>

#include <cblas.h>
#include <omp.h>

#include "core/kernels/conv_gemm.h"
#include "core/kernels/group_threads.h"
#include "core/kernels/winograd4_tiles.h"
#include "core/kernels/winograd_tiles.h"

namespace dtbench {

namespace {

// The two tilings behind one face for the templates below: F(2x2, 3x3) (winograd_tiles.h) and
// F(4x4, 3x3) (winograd4_tiles.h), their functions and arrays alike but for the positions.
template <int64_t kTile>
struct Tiling;

template <>
struct Tiling<2> {
  static constexpr int64_t kPositions = winograd::kPositions;
  static constexpr auto transform_filters = winograd::transform_filters;
  static constexpr auto untransform_filter_gradient = winograd::untransform_filter_gradient;
  static constexpr auto transform_input = winograd::transform_input;
  static constexpr auto inverse_output = winograd::inverse_output;
  static constexpr auto transform_output_gradient = winograd::transform_output_gradient;
  static constexpr auto inverse_input_gradient = winograd::inverse_input_gradient;
  static int64_t tiles_per_image(const ConvSizes& sizes) { return winograd::tile_grid(sizes).per_image(); }
};

template <>
struct Tiling<4> {
  static constexpr int64_t kPositions = winograd4::kPositions;
  static constexpr auto transform_filters = winograd4::transform_filters;
  static constexpr auto untransform_filter_gradient = winograd4::untransform_filter_gradient;
  static constexpr auto transform_input = winograd4::transform_input;
  static constexpr auto inverse_output = winograd4::inverse_output;
  static constexpr auto transform_output_gradient = winograd4::transform_output_gradient;
  static constexpr auto inverse_input_gradient = winograd4::inverse_input_gradient;
  static int64_t tiles_per_image(const ConvSizes& sizes) { return winograd4::tile_grid(sizes).per_image(); }
};

// Floats of a transformed array (positions, rows, T); both tilings lay their matrices
// winograd::position_stride apart.
template <int64_t kTile>
int64_t transformed_size(int64_t rows, int64_t T) {
  return Tiling<kTile>::kPositions * winograd::position_stride(rows, T);
}

// A group's transformed input and product, positions·(C + Cout)·T floats, are sized to about this
// many floats, within [kMinTiles, kMaxTiles] tiles: the transforms write and read them in 16 or 36
// streams each, and ran several times slower per tile once those spilled out of the caches,
// while sgemm loses little down to N = 128 (measured on ResNet-18's 3x3 layers, AMD EPYC).
constexpr int64_t kGroupFloats = int64_t{1} << 19;  // 2 MiB
constexpr int64_t kMinTiles = 128;
constexpr int64_t kMaxTiles = 512;

// With fewer input channels the 16 products are too thin (K = C) for sgemm to run well, and
// im2col's single product (K = 9·C) wins: ResNet's stem, 3 -> 64 channels, ran 3-4x slower by
// Winograd.
constexpr int64_t kMinInChannels = 16;

// Grow-only scratch per thread, shared by every Winograd convolution on it.
struct Workspace {
  std::vector<float> input;    // V or dV (positions, C, T)
  std::vector<float> product;  // M or dM (positions, Cout, T)
  std::vector<float> dU;       // (positions, Cout, C): this thread's share of the filter gradient
  std::vector<float> filters;  // U (positions, Cout, C), on the calling thread
};

Workspace& workspace() {
  thread_local Workspace instance;
  return instance;
}

float* grow(std::vector<float>& buffer, int64_t count) {
  if (static_cast<int64_t>(buffer.size()) < count) buffer.resize(static_cast<size_t>(count));
  return buffer.data();
}

// Threads for transforming the filters or their gradient, of `available`: worth starting only for
// many filters (ResNet's 512-channel layers have 262,144; starting threads costs about what 4096
// take).
int filter_threads(const ConvSizes& sizes, int available) {
  return sizes.out_channels * sizes.in_channels >= 4096 ? available : 1;
}

template <int64_t kTile>
const float* transformed_filters(const float* weight, const ConvSizes& sizes) {
  const int64_t Cout = sizes.out_channels, C = sizes.in_channels;
  float* U = grow(workspace().filters, transformed_size<kTile>(Cout, C));
  Tiling<kTile>::transform_filters(U, weight, Cout, C, filter_threads(sizes, GroupThreads::available()));
  return U;
}

// The samples [b0, b0 + count) of one group, T = count · tiles per image.
struct Group {
  int64_t b0, count, T;
};

template <int64_t kTile>
Group group_at(int64_t index, int64_t group, const ConvSizes& sizes) {
  const int64_t b0 = index * group;
  const int64_t count = std::min(group, sizes.batch - b0);
  return {b0, count, count * Tiling<kTile>::tiles_per_image(sizes)};
}

// V (positions, C, T) of a group's samples.
template <int64_t kTile>
float* transform_group_input(Workspace& ws, const float* inp, const Group& g, const ConvSizes& sizes) {
  const int64_t tiles = Tiling<kTile>::tiles_per_image(sizes);
  const int64_t in_sample = sizes.in_channels * sizes.in_plane();
  float* V = grow(ws.input, transformed_size<kTile>(sizes.in_channels, g.T));
  for (int64_t s = 0; s < g.count; ++s) {
    Tiling<kTile>::transform_input(V, g.T, s * tiles, inp + (g.b0 + s) * in_sample, sizes);
  }
  return V;
}

// For each position ξ: C[ξ] (m, n) = op(A[ξ]) · op(B[ξ]) + beta · C[ξ], row-major, each array's
// matrices winograd::position_stride apart.
template <int64_t kTile>
void position_products(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int64_t m, int64_t n,
                       int64_t k, const float* A, const float* B, float beta, float* C) {
  const int64_t a_rows = trans_a == CblasNoTrans ? m : k, a_columns = trans_a == CblasNoTrans ? k : m;
  const int64_t b_rows = trans_b == CblasNoTrans ? k : n, b_columns = trans_b == CblasNoTrans ? n : k;
  const int64_t a_stride = winograd::position_stride(a_rows, a_columns);
  const int64_t b_stride = winograd::position_stride(b_rows, b_columns);
  const int64_t c_stride = winograd::position_stride(m, n);
  for (int64_t p = 0; p < Tiling<kTile>::kPositions; ++p) {
    cblas_sgemm(CblasRowMajor, trans_a, trans_b, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, A + p * a_stride, static_cast<int>(a_columns),
                B + p * b_stride, static_cast<int>(b_columns), beta, C + p * c_stride,
                static_cast<int>(n));
  }
}

// dweight = Gᵀ (Σ shares) G on `threads` threads (OpenBLAS may be held at one meanwhile), the
// threads' shares, each a (positions, Cout, C) array (16 MiB for 512 channels by F(2x2, 3x3)),
// summed into the first.
template <int64_t kTile>
void untransform_shares(float* dweight, std::vector<float*>& shares, const ConvSizes& sizes,
                        int threads) {
  const int64_t Cout = sizes.out_channels, C = sizes.in_channels;
  std::erase(shares, nullptr);
  if (shares.empty()) {  // no samples
    std::fill_n(dweight, Cout * C * 9, 0.0f);
    return;
  }
  float* total = shares.front();
  const int64_t count = transformed_size<kTile>(Cout, C);
  for (size_t s = 1; s < shares.size(); ++s) {
    const float* share = shares[s];
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t i = 0; i < count; ++i) total[i] += share[i];
  }
  Tiling<kTile>::untransform_filter_gradient(dweight, total, Cout, C, filter_threads(sizes, threads));
}

template <int64_t kTile>
int64_t group_size(const ConvSizes& sizes) {
  const int64_t tiles = std::max<int64_t>(Tiling<kTile>::tiles_per_image(sizes), 1);
  const int64_t batch = std::max<int64_t>(sizes.batch, 1);
  // At least one group per thread, so small planes (ResNet's 4x4) still keep every thread busy.
  const int64_t per_thread = (batch + GroupThreads::available() - 1) / GroupThreads::available();
  const int64_t channels = sizes.in_channels + sizes.out_channels;
  const int64_t target =
      std::clamp<int64_t>(kGroupFloats / (Tiling<kTile>::kPositions * channels), kMinTiles, kMaxTiles);
  const int64_t group = std::clamp<int64_t>(target / tiles, 1, per_thread);
  const int64_t groups = (batch + group - 1) / group;
  return (batch + groups - 1) / groups;  // even groups
}

template <int64_t kTile>
void forward(float* out, const float* inp, const float* weight, const float* bias, const ConvSizes& sizes) {
  using Tiles = Tiling<kTile>;
  const int64_t C = sizes.in_channels, Cout = sizes.out_channels;
  const int64_t tiles = Tiles::tiles_per_image(sizes);
  const int64_t out_sample = Cout * sizes.out_plane();
  const float* U = transformed_filters<kTile>(weight, sizes);
  const int64_t group = group_size<kTile>(sizes);
  const int64_t groups = (sizes.batch + group - 1) / group;
  const GroupThreads threads(groups);
#pragma omp parallel for num_threads(threads.count()) schedule(static) if (threads.count() > 1)
  for (int64_t index = 0; index < groups; ++index) {
    Workspace& ws = workspace();  // this thread's
    const Group g = group_at<kTile>(index, group, sizes);
    const float* V = transform_group_input<kTile>(ws, inp, g, sizes);
    float* M = grow(ws.product, transformed_size<kTile>(Cout, g.T));
    position_products<kTile>(CblasNoTrans, CblasNoTrans, Cout, g.T, C, U, V, 0.0f, M);
    for (int64_t s = 0; s < g.count; ++s) {
      Tiles::inverse_output(out + (g.b0 + s) * out_sample, M, g.T, s * tiles, bias, sizes);
    }
  }
}

template <int64_t kTile>
void backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
              const float* weight, const ConvSizes& sizes) {
  using Tiles = Tiling<kTile>;
  const int64_t C = sizes.in_channels, Cout = sizes.out_channels;
  const int64_t tiles = Tiles::tiles_per_image(sizes);
  const int64_t in_sample = C * sizes.in_plane(), out_sample = Cout * sizes.out_plane();
  const float* U = dinp != nullptr ? transformed_filters<kTile>(weight, sizes) : nullptr;
  const int64_t group = group_size<kTile>(sizes);
  const int64_t groups = (sizes.batch + group - 1) / group;
  const GroupThreads threads(groups);
  // Each thread sums its groups' filter gradient apart; the shares are added below.
  std::vector<float*> shares(static_cast<size_t>(threads.count()), nullptr);
#pragma omp parallel num_threads(threads.count()) if (threads.count() > 1)
  {
    Workspace& ws = workspace();  // this thread's
    float* dU = dweight != nullptr ? grow(ws.dU, transformed_size<kTile>(Cout, C)) : nullptr;
    bool first = true;
#pragma omp for schedule(static)
    for (int64_t index = 0; index < groups; ++index) {
      const Group g = group_at<kTile>(index, group, sizes);
      float* dM = grow(ws.product, transformed_size<kTile>(Cout, g.T));
      for (int64_t s = 0; s < g.count; ++s) {
        Tiles::transform_output_gradient(dM, g.T, s * tiles, dout + (g.b0 + s) * out_sample, sizes);
      }
      if (dU != nullptr) {
        const float* V = transform_group_input<kTile>(ws, inp, g, sizes);
        position_products<kTile>(CblasNoTrans, CblasTrans, Cout, C, g.T, dM, V, first ? 0.0f : 1.0f, dU);
        first = false;
      }
      if (dinp == nullptr) continue;
      float* dV = grow(ws.input, transformed_size<kTile>(C, g.T));  // V is no longer needed
      position_products<kTile>(CblasTrans, CblasNoTrans, C, g.T, Cout, U, dM, 0.0f, dV);
      for (int64_t s = 0; s < g.count; ++s) {
        Tiles::inverse_input_gradient(dinp + (g.b0 + s) * in_sample, dV, g.T, s * tiles, sizes);
      }
    }
    if (!first) shares[static_cast<size_t>(omp_get_thread_num())] = dU;
  }
  if (dweight != nullptr) untransform_shares<kTile>(dweight, shares, sizes, threads.count());
  if (dbias != nullptr) conv2d_bias_gradient(dbias, dout, sizes);
}

}  // namespace

bool conv2d_winograd_applies(const ConvSizes& sizes) {
  return sizes.kernel == 3 && sizes.stride == 1 && sizes.in_channels >= kMinInChannels &&
         sizes.out_height >= 1 && sizes.out_width >= 1;
}

int64_t conv2d_winograd_group_size(const ConvSizes& sizes) { return group_size<2>(sizes); }

int64_t conv2d_winograd4_group_size(const ConvSizes& sizes) { return group_size<4>(sizes); }

int64_t conv2d_winograd_workspace_bytes() {
  const Workspace& ws = workspace();
  const size_t floats = ws.input.size() + ws.product.size() + ws.dU.size() + ws.filters.size();
  return static_cast<int64_t>(floats * sizeof(float));
}

void conv2d_winograd_forward(float* out, const float* inp, const float* weight, const float* bias,
                             const ConvSizes& sizes) {
  forward<2>(out, inp, weight, bias, sizes);
}

void conv2d_winograd_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                              const float* inp, const float* weight, const ConvSizes& sizes) {
  backward<2>(dinp, dweight, dbias, dout, inp, weight, sizes);
}

void conv2d_winograd4_forward(float* out, const float* inp, const float* weight, const float* bias,
                              const ConvSizes& sizes) {
  forward<4>(out, inp, weight, bias, sizes);
}

void conv2d_winograd4_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                               const float* inp, const float* weight, const ConvSizes& sizes) {
  backward<4>(dinp, dweight, dbias, dout, inp, weight, sizes);
}

}  // namespace dtbench
