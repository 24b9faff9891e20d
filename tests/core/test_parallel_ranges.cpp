// The memory-bound loops split among the convolutions' threads (core/kernels/parallel_ranges.h):
// the ranges cover every item once, and batch normalisation, ReLU and the residual join give on
// two threads exactly, bit for bit, what they give on one.
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/kernels/activation.h"
#include "core/kernels/batchnorm.h"
#include "core/kernels/parallel_ranges.h"
#include "core/layers/residual_join.h"
#include "core/util/rng.h"
#include "support/conv_check.h"

namespace dtbench {
namespace {

using testing::BlasThreads;  // parallel_ranges takes OpenBLAS's thread count

std::vector<float> random_values(int64_t n, uint64_t seed, float shift = 0.0f) {
  Rng rng(seed);
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = rng.normal() + shift;
  return values;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(ParallelRanges, CoverEveryItemOnceInAsManyRangesAsThreadsWorkAllows) {
  const BlasThreads two(2);
  for (const auto& [items, min_items, ranges_expected] :
       std::vector<std::tuple<int64_t, int64_t, size_t>>{
           {1000, 100, 2}, {1000, 600, 1}, {7, 1, 2}, {0, 1, 1}, {1, 1, 1}}) {
    std::mutex mutex;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    std::vector<int> seen(static_cast<size_t>(items), 0);
    parallel_ranges(items, min_items, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) ++seen[static_cast<size_t>(i)];
      const std::lock_guard lock(mutex);
      ranges.emplace_back(first, last);
    });
    EXPECT_EQ(ranges.size(), ranges_expected)
        << items << " items, at least " << min_items << " each";
    for (int64_t i = 0; i < items; ++i) ASSERT_EQ(seen[static_cast<size_t>(i)], 1) << "item " << i;
  }
}

// Everything batch normalisation's forward and backward write, for one thread count.
struct BatchNormResults {
  std::vector<float> out, mean, var, inv_std, dinp, dweight, dbias;
};

BatchNormResults batchnorm_on(int threads, int64_t B, int64_t C, int64_t P) {
  const BlasThreads held(threads);
  const std::vector<float> inp = random_values(B * C * P, 1, 3.0f);
  const std::vector<float> dout = random_values(B * C * P, 2);
  const std::vector<float> weight = random_values(C, 3), bias = random_values(C, 4);
  BatchNormResults r{std::vector<float>(inp.size()), std::vector<float>(C), std::vector<float>(C),
                     std::vector<float>(C), std::vector<float>(inp.size()), std::vector<float>(C),
                     std::vector<float>(C)};
  kernels::batchnorm_forward_train(r.out.data(), r.mean.data(), r.var.data(), r.inv_std.data(),
                                   inp.data(), weight.data(), bias.data(), 1e-5f, B, C, P);
  kernels::batchnorm_backward(r.dinp.data(), r.dweight.data(), r.dbias.data(), dout.data(),
                              inp.data(), r.mean.data(), r.inv_std.data(), weight.data(), true, B,
                              C, P);
  return r;
}

TEST(ParallelRanges, BatchNormOnTwoThreadsGivesOneThreadsResultsBitForBit) {
  // 37 channels split unevenly; 300 channels cross the kernel's blocks of 128; a plane too small
  // for its vector lanes alone.
  for (const auto& [B, C, P] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {4, 37, 900}, {8, 300, 64}, {64, 40, 7}}) {
    const BatchNormResults one = batchnorm_on(1, B, C, P), two = batchnorm_on(2, B, C, P);
    const std::string shape =
        "B " + std::to_string(B) + ", C " + std::to_string(C) + ", P " + std::to_string(P);
    EXPECT_TRUE(same_bits(one.out, two.out)) << shape;
    EXPECT_TRUE(same_bits(one.mean, two.mean)) << shape;
    EXPECT_TRUE(same_bits(one.var, two.var)) << shape;
    EXPECT_TRUE(same_bits(one.inv_std, two.inv_std)) << shape;
    EXPECT_TRUE(same_bits(one.dinp, two.dinp)) << shape;
    EXPECT_TRUE(same_bits(one.dweight, two.dweight)) << shape;
    EXPECT_TRUE(same_bits(one.dbias, two.dbias)) << shape;
  }
}

TEST(ParallelRanges, ReluAndTheResidualJoinOnTwoThreadsMatchAnElementwiseReference) {
  const BlasThreads two(2);
  const int64_t n = 3 * kMinFloatsPerThread + 5;
  const std::vector<float> a = random_values(n, 5), b = random_values(n, 6);
  const std::vector<float> g = random_values(n, 7);

  std::vector<float> relu(static_cast<size_t>(n)), drelu(static_cast<size_t>(n));
  kernels::relu_forward(relu.data(), a.data(), n);
  kernels::relu_backward(drelu.data(), g.data(), relu.data(), n);

  Tensor main_branch({n}), shortcut({n}), grad({n}), other({n});
  std::memcpy(main_branch.data(), a.data(), a.size() * sizeof(float));
  std::memcpy(shortcut.data(), b.data(), b.size() * sizeof(float));
  std::memcpy(grad.data(), g.data(), g.size() * sizeof(float));
  std::memcpy(other.data(), b.data(), b.size() * sizeof(float));
  const auto join = make_host_residual_join();
  const Tensor& joined = join->forward(main_branch, shortcut);
  const Tensor& shortcut_grad = join->backward(grad);
  join->accumulate(other, shortcut_grad);

  for (int64_t i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    ASSERT_EQ(relu[k], a[k] > 0.0f ? a[k] : 0.0f) << i;
    ASSERT_EQ(drelu[k], a[k] > 0.0f ? g[k] : 0.0f) << i;
    const float sum = a[k] + b[k];
    const float passed = sum > 0.0f ? g[k] : 0.0f;
    ASSERT_EQ(joined.data()[i], sum > 0.0f ? sum : 0.0f) << i;
    ASSERT_EQ(grad.data()[i], passed) << i;
    ASSERT_EQ(shortcut_grad.data()[i], passed) << i;
    ASSERT_EQ(other.data()[i], b[k] + passed) << i;
  }
}

}  // namespace
}  // namespace dtbench
