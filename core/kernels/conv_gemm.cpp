#include "core/kernels/conv_gemm.h"

#include <algorithm>
#include <vector>

#include <cblas.h>
#include <omp.h>

#include "core/kernels/group_threads.h"
#include "core/kernels/kernel_scratch.h"
#include "core/kernels/target_clones.h"
#include "core/kernels/vec8.h"
#include "core/tensor/tensor.h"

namespace dtbench {

namespace {

// A group is made wide enough for sgemm to run near its peak: about this many columns. Targets
// of 256 to 2048 measured within about 10% of each other on ResNet-18's layers (AMD EPYC,
// OpenBLAS Cooperlake kernels); 512 keeps the column matrix small among the fastest.
constexpr int64_t kTargetColumns = 512;
// The column matrix never exceeds this many floats (32 MiB) unless one sample alone needs more.
constexpr int64_t kMaxColumnFloats = int64_t{8} << 20;

// Grow-only scratch shared by every convolution on this thread: the column matrix, and the
// product (or gathered output gradient) of a group before it is spread back into NCHW.
struct Workspace {
  Tensor columns;  // (K, G·P)
  Tensor product;  // (Cout, G·P)
  Tensor dweight;  // (Cout, K): this thread's share of the weight gradient, when threads split it
};

Workspace& workspace() {
  thread_local Workspace instance;
  return instance;
}

// The buffer's shape is always its largest request, so numel() is its capacity.
float* grow(Tensor& buffer, int64_t count) {
  if (buffer.data() == nullptr || buffer.numel() < count) buffer.resize({count});
  return buffer.data();
}

bool is_pointwise(const ConvSizes& sizes) {
  return sizes.kernel == 1 && sizes.stride == 1 && sizes.padding == 0;
}

// The column matrix (K, count·P) of samples [inp, inp + count samples).
const float* unroll(Workspace& ws, const float* inp, int64_t count, const ConvSizes& sizes) {
  const int64_t P = sizes.out_plane();
  if (count == 1 && is_pointwise(sizes)) return inp;  // (C, H·W) is already (K, P)
  const int64_t N = count * P;
  float* col = grow(ws.columns, sizes.patch_count() * N);  // (K, N)
  const int64_t in_sample = sizes.in_channels * sizes.in_plane();
  for (int64_t g = 0; g < count; ++g) im2col(col + g * P, inp + g * in_sample, sizes, N);
  return col;
}

// Spreads a group's product (Cout, count·P) into NCHW out (count, Cout, P).
void scatter_group(float* out, const float* product, int64_t count, int64_t channels, int64_t P) {
  const int64_t N = count * P;
  for (int64_t g = 0; g < count; ++g) {
    for (int64_t c = 0; c < channels; ++c) {
      std::copy_n(product + c * N + g * P, P, out + (g * channels + c) * P);
    }
  }
}

// The inverse: gathers NCHW dout (count, Cout, P) into (Cout, count·P).
void gather_group(float* product, const float* dout, int64_t count, int64_t channels, int64_t P) {
  const int64_t N = count * P;
  for (int64_t g = 0; g < count; ++g) {
    for (int64_t c = 0; c < channels; ++c) {
      std::copy_n(dout + (g * channels + c) * P, P, product + c * N + g * P);
    }
  }
}

}  // namespace

int64_t conv2d_group_size(const ConvSizes& sizes) {
  const int64_t P = std::max<int64_t>(sizes.out_plane(), 1);
  const int64_t K = std::max<int64_t>(sizes.patch_count(), 1);
  const int64_t batch = std::max<int64_t>(sizes.batch, 1);
  // At least one group per thread, as the Winograd convolution's: with a single group (ResNet's 4x4
  // planes) the one product ran on OpenBLAS's own threads, whose worker then spins for its next
  // call (about 2^28 cycles) on a core the next layers' threads need.
  const int64_t per_thread = (batch + GroupThreads::available() - 1) / GroupThreads::available();
  int64_t group = std::clamp<int64_t>((kTargetColumns + P - 1) / P, 1, per_thread);
  group = std::max<int64_t>(1, std::min(group, kMaxColumnFloats / (K * P)));
  // Even groups: 64 samples in groups of at most 3 become 22 groups of 3 or 2, not 21 + 1.
  const int64_t groups = (batch + group - 1) / group;
  return (batch + groups - 1) / groups;
}

int64_t conv2d_workspace_bytes() {
  auto bytes = [](const Tensor& buffer) -> int64_t {
    return buffer.data() == nullptr ? 0 : buffer.numel() * static_cast<int64_t>(sizeof(float));
  };
  return bytes(workspace().columns) + bytes(workspace().product) + bytes(workspace().dweight);
}

void conv2d_forward(float* out, const float* inp, const float* weight, const float* bias,
                    const ConvSizes& sizes) {
  const int64_t B = sizes.batch, Cout = sizes.out_channels, K = sizes.patch_count();
  const int64_t P = sizes.out_plane();
  const int64_t in_sample = sizes.in_channels * sizes.in_plane();
  const int64_t out_sample = Cout * P;
  const int64_t group = conv2d_group_size(sizes);
  const int64_t groups = (B + group - 1) / group;
  const GroupThreads threads(groups);
#pragma omp parallel for num_threads(threads.count()) schedule(static) if (threads.count() > 1)
  for (int64_t index = 0; index < groups; ++index) {
    Workspace& ws = workspace();  // this thread's
    const int64_t b0 = index * group;
    const int64_t count = std::min(group, B - b0);
    const int64_t N = count * P;
    const float* col = unroll(ws, inp + b0 * in_sample, count, sizes);  // (K, N)
    // With one sample the product (Cout, P) already is the sample's NCHW output.
    float* product = count == 1 ? out + b0 * out_sample : grow(ws.product, Cout * N);  // (Cout, N)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(Cout),
                static_cast<int>(N), static_cast<int>(K), 1.0f, weight, static_cast<int>(K), col,
                static_cast<int>(N), 0.0f, product, static_cast<int>(N));
    if (count > 1) scatter_group(out + b0 * out_sample, product, count, Cout, P);
  }
  if (bias == nullptr) return;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t c = 0; c < Cout; ++c) {
      float* plane = out + (b * Cout + c) * P;  // (P)
      const float shift = bias[c];
      for (int64_t p = 0; p < P; ++p) plane[p] += shift;
    }
  }
}

void conv2d_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, const ConvSizes& sizes) {
  const int64_t B = sizes.batch, Cout = sizes.out_channels, K = sizes.patch_count();
  const int64_t P = sizes.out_plane();
  const int64_t in_sample = sizes.in_channels * sizes.in_plane();
  const int64_t out_sample = Cout * P;
  const int64_t group = conv2d_group_size(sizes);
  const int64_t groups = (B + group - 1) / group;
  const GroupThreads threads(groups);
  // With several threads each sums its groups' weight gradient apart; the shares are added below.
  std::vector<const float*> shares(static_cast<size_t>(threads.count()), nullptr);
  if (B == 0 && dweight != nullptr) std::fill_n(dweight, Cout * K, 0.0f);
#pragma omp parallel num_threads(threads.count()) if (threads.count() > 1)
  {
    Workspace& ws = workspace();  // this thread's
    const int thread = omp_get_thread_num();
    float* my_dweight = dweight;  // (Cout, K), or this thread's share when threads split it
    if (dweight != nullptr && threads.count() > 1) my_dweight = grow(ws.dweight, Cout * K);
    bool first = true;
#pragma omp for schedule(static)
  for (int64_t index = 0; index < groups; ++index) {
    const int64_t b0 = index * group;
    const int64_t count = std::min(group, B - b0);
    const int64_t N = count * P;
    const float* dout_group = dout + b0 * out_sample;  // (count, Cout, P)
    if (count > 1) {
      float* gathered = grow(ws.product, Cout * N);
      gather_group(gathered, dout_group, count, Cout, P);
      dout_group = gathered;  // now (Cout, N)
    }
    if (my_dweight != nullptr) {
      const float* col = unroll(ws, inp + b0 * in_sample, count, sizes);  // (K, N)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(Cout),
                  static_cast<int>(K), static_cast<int>(N), 1.0f, dout_group, static_cast<int>(N),
                  col, static_cast<int>(N), first ? 0.0f : 1.0f, my_dweight, static_cast<int>(K));
      first = false;
    }
    if (dinp == nullptr) continue;

    float* dinp_group = dinp + b0 * in_sample;  // (count, C, H, W)
    const bool direct = count == 1 && is_pointwise(sizes);
    // col is no longer needed: dcol takes its place (or goes straight to dinp for 1x1).
    float* dcol = direct ? dinp_group : grow(ws.columns, K * N);  // (K, N)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(K), static_cast<int>(N),
                static_cast<int>(Cout), 1.0f, weight, static_cast<int>(K), dout_group,
                static_cast<int>(N), 0.0f, dcol, static_cast<int>(N));
    if (direct) continue;
    for (int64_t g = 0; g < count; ++g) col2im(dinp_group + g * in_sample, dcol + g * P, sizes, N);
  }
    if (!first) shares[static_cast<size_t>(thread)] = my_dweight;
  }
  if (threads.count() > 1) add_weight_shares(dweight, shares, Cout * K);
  if (dbias != nullptr) conv2d_bias_gradient(dbias, dout, sizes);
}

namespace {

// The sum of `planes` planes of P floats, `stride` floats apart. Four vectors of running sums, not
// one: a single sum waits on each addition in turn (a float sum is not reassociated by the
// compiler). Built for AVX2 and the baseline, the loader picking one (see target_clones.h).
DTB_TARGET_CLONES("avx2", "default")
float sum_of_planes(const float* first, int64_t planes, int64_t stride, int64_t P) {
  constexpr int64_t kBlock = 32;  // four vectors of eight
  const int64_t blocks = P / kBlock * kBlock, whole = P / 8 * 8;
  vec8::Vec8 sums[4] = {};
  float rest = 0.0f;
  for (int64_t b = 0; b < planes; ++b) {
    const float* plane = first + b * stride;  // (P)
    int64_t p = 0;
    for (; p < blocks; p += kBlock) {
      for (int v = 0; v < 4; ++v) sums[v] += vec8::load(plane + p + 8 * v);
    }
    for (; p < whole; p += 8) sums[0] += vec8::load(plane + p);
    for (; p < P; ++p) rest += plane[p];
  }
  return vec8::lane_sum((sums[0] + sums[1]) + (sums[2] + sums[3])) + rest;
}

}  // namespace

void conv2d_bias_gradient(float* dbias, const float* dout, const ConvSizes& sizes) {
  const int64_t B = sizes.batch, Cout = sizes.out_channels, P = sizes.out_plane();
  for (int64_t c = 0; c < Cout; ++c) dbias[c] = sum_of_planes(dout + c * P, B, Cout * P, P);
}

}  // namespace dtbench
