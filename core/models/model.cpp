#include "core/models/model.h"

#include "core/util/error.h"
#include "core/util/rng.h"

namespace dtbench {

Model::Model(std::string name, Shape sample_input, int64_t classes, std::unique_ptr<Sequential> net,
             DeviceBackend* device)
    : name_(std::move(name)), sample_input_(std::move(sample_input)), classes_(classes),
      net_(std::move(net)), device_(device) {
  // The data never needs a gradient, so the first layer can skip computing one.
  net_->set_needs_input_grad(false);
  const Shape output = net_->configure(sample_input_);
  if (output != Shape{classes_}) {
    fail_input("model {}: its output for input {} is {}, expected ({}) for {} classes", name_,
               shape_string(sample_input_), shape_string(output), classes_, classes_);
  }
  // Twins are made from configured layers, before the walk names and collects what they share.
  if (device_ != nullptr) net_->adopt_twins(*device_);
  std::vector<Param*> params;
  walk(*net_, "", params);
  arena_.bind(std::move(params), device_ != nullptr ? device_->allocator() : allocate_aligned);
}

void Model::walk(Layer& layer, const std::string& path, std::vector<Param*>& params) {
  std::vector<Param*> own;
  layer.collect_params(own);
  LayerInfo info{path, layer.kind(), 0, layer.macs_per_sample()};
  for (Param* param : own) {
    param->name = path.empty() ? param->name : path + "." + param->name;
    info.parameters += param->numel();
    params.push_back(param);
  }
  params_of_layer_[&layer] = own;
  if (auto* sequential = dynamic_cast<Sequential*>(&layer)) sequentials_.push_back(sequential);
  layer.collect_buffers(buffers_);
  parameter_count_ += info.parameters;
  macs_per_sample_ += info.macs_per_sample;
  all_layers_.push_back(&layer);
  const auto children = layer.children();
  if (children.empty()) {
    layers_.push_back(std::move(info));
    leaf_layers_.push_back(&layer);
  }
  for (auto& [child_name, child] : children) {
    walk(*child, path.empty() ? child_name : path + "." + child_name, params);
  }
}

void Model::initialize(uint64_t seed) {
  arena_.initialize(seed);
  if (device_ != nullptr) device_->move_to_device(arena_.values());  // written on the host
  for (size_t i = 0; i < all_layers_.size(); ++i) {
    all_layers_[i]->reseed(Rng::derive(seed, 0xD209, i).next_u64());
  }
}

const Tensor& Model::forward(const Tensor& batch, Mode mode) {
  Shape expected = sample_input_;
  expected.insert(expected.begin(), batch.rank() > 0 ? batch.dim(0) : 0);
  DTB_CHECK(batch.shape() == expected, "model {} expects {} but got {}", name_,
            shape_string(expected), shape_string(batch.shape()));
  return net_->forward(batch, mode);
}

LossResult Model::loss(const Tensor& logits, std::span<const int32_t> labels, Tensor* grad_logits) {
  if (device_ != nullptr) {
    if (auto on_device = device_->softmax_cross_entropy(logits, labels, grad_logits)) return *on_device;
    device_->synchronize();  // a host layer made the logits; the host reads them next
  }
  return softmax_cross_entropy(logits, labels, grad_logits);
}

void Model::backward(Tensor& grad_logits) { net_->backward(grad_logits); }

void Model::set_gradient_ready_hook(std::function<void(const Param&)> hook) {
  gradient_ready_ = std::move(hook);
  if (!gradient_ready_) {
    for (Sequential* sequential : sequentials_) sequential->set_backward_observer(nullptr);
    return;
  }
  backward_observer_ = [this](Layer& layer) {
    const auto found = params_of_layer_.find(&layer);
    if (found == params_of_layer_.end()) return;
    for (const Param* param : found->second) gradient_ready_(*param);
  };
  for (Sequential* sequential : sequentials_) sequential->set_backward_observer(&backward_observer_);
}

}  // namespace dtbench

namespace dtbench {

void Model::autotune(int64_t batch) {
  for (Layer* layer : all_layers_) layer->autotune(batch);
}

void Model::set_operator_times(OperatorTimes* times) {
  for (Layer* layer : all_layers_) layer->set_operator_times(times);
  if (device_ != nullptr) device_->set_operator_timing(times != nullptr);
}

}  // namespace dtbench
