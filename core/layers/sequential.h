#pragma once
#include <functional>
#include <memory>
#include <utility>

#include "core/layers/layer.h"
#include "core/layers/residual_join.h"

namespace dtbench {

class DeviceBackend;  // core/device/device.h

// Layers applied in order; backward runs them in reverse.
class Sequential : public Layer {
 public:
  // Appends a layer named `name` (or its index when empty) and returns it.
  template <typename L, typename... Args>
  L& emplace(std::string name, Args&&... args) {
    auto layer = std::make_unique<L>(std::forward<Args>(args)...);
    L& ref = *layer;
    add(std::move(name), std::move(layer));
    return ref;
  }
  void add(std::string name, std::unique_ptr<Layer> layer);
  // Called after each child's backward, so the model can tell which gradients are final.
  void set_backward_observer(const std::function<void(Layer&)>* observer) { observer_ = observer; }
  bool empty() const { return layers_.empty(); }
  // Hands every leaf layer of this tree (configured) to `device`, keeping what it gives back: the
  // layer's device twin, or the layer itself.
  void adopt_twins(DeviceBackend& device);
  Layer& front() { return *layers_.front().layer; }

  std::string kind() const override { return "sequential"; }
  Shape configure(const Shape& sample_input) override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;
  std::vector<std::pair<std::string, Layer*>> children() override;

 private:
  struct Entry {
    std::string name;
    std::unique_ptr<Layer> layer;
    std::string kind;  // layer->kind(), kept for operator timing
    bool leaf;         // no children: timed here (composites time their own parts)
  };
  std::vector<Entry> layers_;
  const std::function<void(Layer&)>* observer_ = nullptr;
};

// A residual block: relu(main(x) + shortcut(x)), the shortcut being the identity when empty
// (He et al. 2016). Basic and bottleneck blocks differ only in what `main` holds.
class Residual : public Layer {
 public:
  Residual(std::unique_ptr<Sequential> main, std::unique_ptr<Sequential> shortcut);
  std::string kind() const override { return "residual"; }
  Shape configure(const Shape& sample_input) override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;
  std::vector<std::pair<std::string, Layer*>> children() override;
  int64_t macs_per_sample() const override { return 0; }
  // Both branches' leaves to `device` (Sequential::adopt_twins), and the join to the device's own
  // when it has one, so that the branches' outputs are added where they are.
  void adopt_twins(DeviceBackend& device);

 private:
  std::unique_ptr<Sequential> main_;
  std::unique_ptr<Sequential> shortcut_;  // empty: identity
  std::unique_ptr<ResidualJoin> join_ = make_host_residual_join();
};

}  // namespace dtbench
