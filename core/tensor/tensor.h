#pragma once
// A float32 tensor: a shape and a pointer. It either owns 64-byte-aligned storage or is a view
// into storage someone else owns (a parameter arena, another tensor). Batch is dimension 0.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace dtbench {

using Shape = std::vector<int64_t>;

int64_t element_count(const Shape& shape);
std::string shape_string(const Shape& shape);  // "(64, 3, 32, 32)"

class Tensor {
 public:
  Tensor() = default;
  // Owning, zero-filled.
  explicit Tensor(Shape shape);
  // Non-owning view over `data`, which must outlive the view.
  static Tensor view(float* data, Shape shape);

  float* data() { return data_; }
  const float* data() const { return data_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int axis) const { return shape_.at(static_cast<size_t>(axis)); }
  int64_t numel() const { return element_count(shape_); }
  bool empty() const { return numel() == 0; }
  bool owns_storage() const { return storage_ != nullptr; }
  std::span<float> span() { return {data_, static_cast<size_t>(numel())}; }
  std::span<const float> span() const { return {data_, static_cast<size_t>(numel())}; }

  // Gives an owning tensor this shape, reallocating only when it needs more room than it has
  // (so a layer's buffers are allocated once per batch size, not once per step). Contents are
  // unspecified afterwards. Views cannot be resized.
  void resize(const Shape& shape);
  // The same data seen with another shape of equal element count.
  Tensor reshaped(Shape shape) const;

  void fill(float value);
  void zero() { fill(0.0f); }

 private:
  std::shared_ptr<float[]> storage_;
  float* data_ = nullptr;
  Shape shape_;
  int64_t capacity_ = 0;
};

// 64-byte-aligned float storage, zero-filled; freed with std::free.
std::shared_ptr<float[]> allocate_aligned(int64_t count);

}  // namespace dtbench
