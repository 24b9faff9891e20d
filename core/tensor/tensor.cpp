#include "core/tensor/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/util/error.h"

namespace dtbench {

int64_t element_count(const Shape& shape) {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

std::string shape_string(const Shape& shape) { return fmt::format("({})", fmt::join(shape, ", ")); }

std::shared_ptr<float[]> allocate_aligned(int64_t count) {
  constexpr size_t kAlignment = 64;
  size_t bytes = static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(float);
  bytes = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* memory = std::aligned_alloc(kAlignment, bytes);
  if (memory == nullptr) throw std::bad_alloc();
  std::memset(memory, 0, bytes);
  return std::shared_ptr<float[]>(static_cast<float*>(memory), [](float* p) { std::free(p); });
}

Tensor::Tensor(Shape shape) : shape_(std::move(shape)) {
  for (int64_t extent : shape_) DTB_CHECK(extent >= 0, "negative extent in {}", shape_string(shape_));
  capacity_ = element_count(shape_);
  storage_ = allocate_aligned(capacity_);
  data_ = storage_.get();
}

Tensor Tensor::view(float* data, Shape shape) {
  Tensor tensor;
  tensor.data_ = data;
  tensor.shape_ = std::move(shape);
  tensor.capacity_ = element_count(tensor.shape_);
  return tensor;
}

void Tensor::resize(const Shape& shape) {
  const int64_t needed = element_count(shape);
  if (storage_ == nullptr && data_ != nullptr) {
    DTB_CHECK(needed <= capacity_, "cannot grow a view from {} to {}", shape_string(shape_),
              shape_string(shape));
  } else if (needed > capacity_ || storage_ == nullptr) {
    storage_ = allocate_aligned(needed);
    data_ = storage_.get();
    capacity_ = needed;
  }
  shape_ = shape;
}

Tensor Tensor::reshaped(Shape shape) const {
  DTB_CHECK(element_count(shape) == numel(), "reshape {} to {}", shape_string(shape_),
            shape_string(shape));
  Tensor result = *this;
  result.shape_ = std::move(shape);
  return result;
}

void Tensor::fill(float value) { std::fill_n(data_, numel(), value); }

}  // namespace dtbench
