#include "core/layers/sequential.h"

#include "core/device/device.h"
#include "core/util/error.h"

namespace dtbench {

namespace {
const std::string kAddKind = "residual add+relu";
}  // namespace

void Sequential::add(std::string name, std::unique_ptr<Layer> layer) {
  if (name.empty()) name = std::to_string(layers_.size());
  const bool leaf = layer->children().empty();
  std::string kind = layer->kind();
  layers_.push_back({std::move(name), std::move(layer), std::move(kind), leaf});
}

Shape Sequential::configure(const Shape& sample_input) {
  // Before configuring: a composite first layer passes the flag on to its own first layer.
  if (!layers_.empty()) layers_.front().layer->set_needs_input_grad(needs_input_grad_);
  Shape shape = sample_input;
  for (auto& entry : layers_) shape = entry.layer->configure(shape);
  return shape;
}

const Tensor& Sequential::forward(const Tensor& input, Mode mode) {
  const Tensor* x = &input;
  for (auto& entry : layers_) {
    ScopedOperatorTimer timer(entry.leaf ? operator_times_ : nullptr, entry.kind, false);
    x = &entry.layer->forward(*x, mode);
  }
  return *x;
}

Tensor& Sequential::backward(Tensor& grad_output) {
  Tensor* grad = &grad_output;
  for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
    {
      ScopedOperatorTimer timer(it->leaf ? operator_times_ : nullptr, it->kind, true);
      grad = &it->layer->backward(*grad);
    }
    if (observer_ != nullptr) (*observer_)(*it->layer);
  }
  return *grad;
}

void Sequential::adopt_twins(DeviceBackend& device) {
  for (Entry& entry : layers_) {
    if (entry.leaf) {
      entry.layer = device.adopt(std::move(entry.layer));
    } else if (auto* sequential = dynamic_cast<Sequential*>(entry.layer.get())) {
      sequential->adopt_twins(device);
    } else {
      // Residual blocks are the only other composite: they adopt their branches and their join.
      auto* residual = dynamic_cast<Residual*>(entry.layer.get());
      DTB_CHECK(residual != nullptr, "composite {} ({}) cannot take a device's twins", entry.name, entry.kind);
      residual->adopt_twins(device);
    }
  }
}

std::vector<std::pair<std::string, Layer*>> Sequential::children() {
  std::vector<std::pair<std::string, Layer*>> result;
  for (auto& entry : layers_) result.emplace_back(entry.name, entry.layer.get());
  return result;
}

Residual::Residual(std::unique_ptr<Sequential> main, std::unique_ptr<Sequential> shortcut)
    : main_(std::move(main)), shortcut_(std::move(shortcut)) {
  DTB_CHECK(main_ != nullptr && !main_->empty(), "a residual block needs a main branch");
  if (shortcut_ == nullptr) shortcut_ = std::make_unique<Sequential>();
}

Shape Residual::configure(const Shape& sample_input) {
  main_->set_needs_input_grad(needs_input_grad_);
  shortcut_->set_needs_input_grad(needs_input_grad_);
  const Shape main_shape = main_->configure(sample_input);
  const Shape shortcut_shape = shortcut_->configure(sample_input);
  if (main_shape != shortcut_shape) {
    fail_input("residual block: main branch gives {} but the shortcut gives {}",
               shape_string(main_shape), shape_string(shortcut_shape));
  }
  return main_shape;
}

const Tensor& Residual::forward(const Tensor& input, Mode mode) {
  const Tensor& main_out = main_->forward(input, mode);
  const Tensor& shortcut_out = shortcut_->empty() ? input : shortcut_->forward(input, mode);
  ScopedOperatorTimer timer(operator_times_, kAddKind, false);
  return join_->forward(main_out, shortcut_out);
}

Tensor& Residual::backward(Tensor& grad_output) {
  Tensor* shortcut_grad = nullptr;
  {
    ScopedOperatorTimer timer(operator_times_, kAddKind, true);
    shortcut_grad = &join_->backward(grad_output);
  }
  Tensor& main_grad = main_->backward(grad_output);
  if (!needs_input_grad_) {
    if (!shortcut_->empty()) shortcut_->backward(*shortcut_grad);
    return main_grad;
  }
  Tensor& other_grad = shortcut_->empty() ? *shortcut_grad : shortcut_->backward(*shortcut_grad);
  ScopedOperatorTimer timer(operator_times_, kAddKind, true);
  join_->accumulate(main_grad, other_grad);
  return main_grad;
}

void Residual::adopt_twins(DeviceBackend& device) {
  main_->adopt_twins(device);
  shortcut_->adopt_twins(device);
  if (auto join = device.residual_join()) join_ = std::move(join);
}

std::vector<std::pair<std::string, Layer*>> Residual::children() {
  std::vector<std::pair<std::string, Layer*>> result{{"main", main_.get()}};
  if (!shortcut_->empty()) result.emplace_back("shortcut", shortcut_.get());
  return result;
}

}  // namespace dtbench
