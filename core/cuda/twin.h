#pragma once
// A device twin: runs a host layer's forward and backward on the GPU. It owns the host layer and
// answers for it everything that is configuration (kind, parameters, buffers, MACs, seeds), so
// the model names, lays out and initialises the same parameters whichever device runs them.
// A twin queues its work on the worker's stream and returns without waiting (CudaContext::
// end_operation), as a framework's layers do: what reads its results on the host waits for the
// device first (the loss's sums, the arena's copies to the host, downloads). Its outputs and input
// gradients are device memory; the parameters it reads and the gradients it writes are the device's
// copy of the model's arena (context.h).
#include <memory>
#include <vector>

#include "core/cuda/context.h"
#include "core/layers/layer.h"

namespace dtbench::cuda {

class Twin : public Layer {
 public:
  Twin(CudaContext& context, std::unique_ptr<Layer> host);
  std::string kind() const override { return host_->kind(); }
  Shape configure(const Shape& sample_input) override { return host_->configure(sample_input); }
  void collect_params(std::vector<Param*>& out) override { host_->collect_params(out); }
  void collect_buffers(std::vector<Tensor*>& out) override { host_->collect_buffers(out); }
  int64_t macs_per_sample() const override { return host_->macs_per_sample(); }
  void reseed(uint64_t seed) override { host_->reseed(seed); }

 protected:
  // The device's copy of the host layer's parameter `index` (in its order) and of its gradient.
  float* value(size_t index) const;
  float* grad(size_t index) const;

  CudaContext& context_;
  std::unique_ptr<Layer> host_;

 private:
  std::vector<Param*> params_;
};

// cuDNN descriptors that free themselves.
class TensorDesc {
 public:
  TensorDesc();
  ~TensorDesc();
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  // NCHW; a tensor of another rank is seen as (dim 0, the rest, 1, 1).
  void set(const Shape& shape);
  void set(int64_t n, int64_t c, int64_t h, int64_t w);
  cudnnTensorDescriptor_t get() const { return descriptor_; }

 private:
  cudnnTensorDescriptor_t descriptor_;
};

}  // namespace dtbench::cuda
