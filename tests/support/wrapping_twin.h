#pragma once
// A stand-in for a device backend's twin of a layer, for testing the device seam on the CPU: it
// owns the host layer and runs it, and tells a subclass of each forward and backward call (to
// count them, or to "queue" device time).
#include <memory>
#include <string>
#include <vector>

#include "core/layers/layer.h"

namespace dtbench::testing {

class WrappingTwin : public Layer {
 public:
  explicit WrappingTwin(std::unique_ptr<Layer> host) : host_(std::move(host)) {
    set_needs_input_grad(host_->needs_input_grad());
  }
  std::string kind() const override { return host_->kind(); }
  Shape configure(const Shape& sample_input) override { return host_->configure(sample_input); }
  const Tensor& forward(const Tensor& input, Mode mode) override {
    on_call("forward");
    return host_->forward(input, mode);
  }
  Tensor& backward(Tensor& grad_output) override {
    on_call("backward");
    return host_->backward(grad_output);
  }
  void collect_params(std::vector<Param*>& out) override { host_->collect_params(out); }
  void collect_buffers(std::vector<Tensor*>& out) override { host_->collect_buffers(out); }
  int64_t macs_per_sample() const override { return host_->macs_per_sample(); }
  void reseed(uint64_t seed) override { host_->reseed(seed); }

 protected:
  // "forward" or "backward", before the host layer runs.
  virtual void on_call(const std::string& pass) = 0;

 private:
  std::unique_ptr<Layer> host_;
};

}  // namespace dtbench::testing
