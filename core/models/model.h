#pragma once
// A model: a named tree of layers whose parameters live in one arena. Building it configures every
// layer for the sample shape (so a misfit input is an error at build time, not at step 0), names
// every parameter by its path and binds the arena.
#include <functional>
#include <memory>
#include <unordered_map>
#include <string>
#include <vector>

#include "core/device/device.h"
#include "core/layers/sequential.h"

namespace dtbench {

struct LayerInfo {
  std::string path;  // "layer1.0.main.0"
  std::string kind;  // "conv2d"
  int64_t parameters = 0;
  int64_t macs_per_sample = 0;
};

class Model {
 public:
  // With a `device`, every layer it has a twin for runs there and the arena is the device's mirrored
  // host memory (core/device/device.h); null: the host. The device must outlive the model.
  Model(std::string name, Shape sample_input, int64_t classes, std::unique_ptr<Sequential> net,
        DeviceBackend* device = nullptr);

  const std::string& name() const { return name_; }
  const Shape& sample_input_shape() const { return sample_input_; }
  int64_t classes() const { return classes_; }

  // Weights from the seed (bit-identical for the same seed) and the stochastic layers' streams;
  // on a device, copied there.
  void initialize(uint64_t seed);

  // batch (B, sample_input...) -> logits (B, classes).
  const Tensor& forward(const Tensor& batch, Mode mode);
  // The batch's softmax cross-entropy over forward's logits, and their gradient when grad_logits is
  // given: on the device when the model is on one (its logits are the device's), else the host's.
  LossResult loss(const Tensor& logits, std::span<const int32_t> labels, Tensor* grad_logits);
  // Writes every parameter's gradient into the arena's gradient block.
  void backward(Tensor& grad_logits);
  // Called during backward for each parameter as soon as its gradient is final (the order is
  // the same on every worker), so a transport can start sending while backward goes on.
  // An empty function removes the hook.
  void set_gradient_ready_hook(std::function<void(const Param&)> hook);
  // Every layer's autotune (layer.h) for batches of `batch` samples: before the timed steps.
  void autotune(int64_t batch);
  // Times every layer's forward and backward into `times` by operator kind; null turns it off.
  void set_operator_times(OperatorTimes* times);

  ParamArena& arena() { return arena_; }
  const ParamArena& arena() const { return arena_; }
  // Batch norm running statistics and other buffers that define the model besides its weights.
  const std::vector<Tensor*>& buffers() const { return buffers_; }
  const std::vector<LayerInfo>& layers() const { return layers_; }
  // The leaf layers themselves, in the order and with the paths of layers().
  const std::vector<const Layer*>& leaf_layers() const { return leaf_layers_; }
  int64_t parameter_count() const { return parameter_count_; }
  int64_t macs_per_sample() const { return macs_per_sample_; }
  // The backend it was built for; null for the host.
  DeviceBackend* device() const { return device_; }

 private:
  void walk(Layer& layer, const std::string& path, std::vector<Param*>& params);

  std::string name_;
  Shape sample_input_;
  int64_t classes_;
  std::unique_ptr<Sequential> net_;
  DeviceBackend* device_;
  ParamArena arena_;
  std::vector<Tensor*> buffers_;
  std::vector<Layer*> all_layers_;
  std::unordered_map<const Layer*, std::vector<Param*>> params_of_layer_;
  std::vector<Sequential*> sequentials_;
  std::function<void(const Param&)> gradient_ready_;
  std::function<void(Layer&)> backward_observer_;
  std::vector<LayerInfo> layers_;
  std::vector<const Layer*> leaf_layers_;
  int64_t parameter_count_ = 0;
  int64_t macs_per_sample_ = 0;
};

}  // namespace dtbench
