#pragma once
// Every parameter of a model lives in one contiguous block of values, and every gradient in a
// second block with the same layout (after llm.c). A transport can then send all gradients as
// one buffer, or a bucket as one contiguous range, without copying. Layers hold Param handles whose
// pointers the arena fills in when the model is bound.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor/tensor.h"

namespace dtbench {

// How a parameter starts. Fan-in / fan-out are the layer's, given when the parameter is declared.
enum class Init {
  Zeros,
  Ones,
  KaimingNormal,  // N(0, 2 / fan_in): layers followed by ReLU (He et al. 2015)
  XavierUniform,  // U(±sqrt(6 / (fan_in + fan_out))): tanh / linear outputs (Glorot & Bengio 2010)
};

struct Param {
  std::string name;  // "features.0.weight"; set by the model from the layer's path
  Shape shape;
  Init init = Init::Zeros;
  int64_t fan_in = 0;
  int64_t fan_out = 0;

  // Filled in by ParamArena::bind.
  float* value = nullptr;
  float* grad = nullptr;
  int64_t offset = 0;  // in elements, into the arena

  int64_t numel() const { return element_count(shape); }
  Tensor value_tensor() const { return Tensor::view(value, shape); }
  Tensor grad_tensor() const { return Tensor::view(grad, shape); }
};

// A contiguous range of the arena, in elements.
struct ArenaRange {
  int64_t offset = 0;
  int64_t count = 0;
};

class ParamArena {
 public:
  // Lays the parameters out in the given order (the model's layer order) and points each Param at
  // its slice of the value and gradient blocks. The Params must outlive the arena. The blocks come
  // from `allocate` (a device backend's, for memory its kernels can use too).
  void bind(std::vector<Param*> params, std::shared_ptr<float[]> (*allocate)(int64_t) = allocate_aligned);

  // Fills every value from its Init policy with a generator seeded by `seed`: the same seed gives
  // bit-identical weights. Each parameter draws from its own stream so that adding a layer does not
  // change the others' weights.
  void initialize(uint64_t seed);

  std::span<float> values() { return {values_.get(), static_cast<size_t>(count_)}; }
  std::span<const float> values() const { return {values_.get(), static_cast<size_t>(count_)}; }
  std::span<float> grads() { return {grads_.get(), static_cast<size_t>(count_)}; }
  std::span<const float> grads() const { return {grads_.get(), static_cast<size_t>(count_)}; }
  const std::vector<Param*>& params() const { return params_; }
  int64_t count() const { return count_; }

  // Splits the arena into contiguous ranges of about `bucket_bytes` each, in reverse layer order
  // (the order backward produces gradients), never splitting a parameter.
  std::vector<ArenaRange> buckets(int64_t bucket_bytes) const;

 private:
  std::vector<Param*> params_;
  std::shared_ptr<float[]> values_;
  std::shared_ptr<float[]> grads_;
  int64_t count_ = 0;
};

}  // namespace dtbench
