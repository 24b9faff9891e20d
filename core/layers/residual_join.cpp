#include "core/layers/residual_join.h"

#include <algorithm>

#include "core/kernels/parallel_ranges.h"

namespace dtbench {

namespace {

class HostResidualJoin final : public ResidualJoin {
 public:
  const Tensor& forward(const Tensor& main, const Tensor& shortcut) override {
    output_.resize(main.shape());
    const float* a = main.data();
    const float* b = shortcut.data();
    float* y = output_.data();
    parallel_ranges(output_.numel(), kMinFloatsPerThread, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) y[i] = std::max(a[i] + b[i], 0.0f);
    });
    return output_;
  }

  Tensor& backward(Tensor& grad_output) override {
    shortcut_grad_.resize(grad_output.shape());
    float* g = grad_output.data();
    float* copy = shortcut_grad_.data();
    // The output is positive exactly where the sum was.
    const float* y = output_.data();
    parallel_ranges(grad_output.numel(), kMinFloatsPerThread, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) copy[i] = g[i] = y[i] > 0.0f ? g[i] : 0.0f;
    });
    return shortcut_grad_;
  }

  void accumulate(Tensor& sum, const Tensor& other) override {
    float* s = sum.data();
    const float* add = other.data();
    parallel_ranges(sum.numel(), kMinFloatsPerThread, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) s[i] += add[i];
    });
  }

 private:
  Tensor output_;
  Tensor shortcut_grad_;
};

}  // namespace

std::unique_ptr<ResidualJoin> make_host_residual_join() { return std::make_unique<HostResidualJoin>(); }

}  // namespace dtbench
