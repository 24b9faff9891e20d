// The `cuda` device: opens the worker's GPU (by local rank) and makes the twins of the layers it
// has kernels for and residual blocks' joins; sequential and flatten (a view) stay host layers, and
// the arena is mirrored host memory (context.h).
#include <cstdlib>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/cuda/device_loss.h"
#include "core/cuda/device_optimizer.h"
#include "core/cuda/phase_marks.h"
#include "core/cuda/plan/device_pick.h"
#include "core/cuda/plan/memory_budget.h"
#include "core/cuda/residual_join.h"
#include "core/cuda/register.h"
#include "core/cuda/twins.h"
#include "core/device/device.h"
#include "core/layers/activation.h"
#include "core/layers/batchnorm.h"
#include "core/layers/conv2d.h"
#include "core/layers/linear.h"
#include "core/layers/pooling.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

// cuDNN's name for a convolution algorithm (the enums' order in cudnn_cnn.h).
std::string cudnn_algorithm_name(cuda_plan::ConvDirection direction, int algorithm) {
  static const std::vector<std::string> forward = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT",
                                                   "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  static const std::vector<std::string> data = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD",
                                                "WINOGRAD_NONFUSED"};
  static const std::vector<std::string> filter = {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD",
                                                  "WINOGRAD_NONFUSED", "FFT_TILING"};
  const std::vector<std::string>& names = direction == cuda_plan::ConvDirection::Forward        ? forward
                                          : direction == cuda_plan::ConvDirection::BackwardData ? data
                                                                                               : filter;
  return algorithm >= 0 && algorithm < static_cast<int>(names.size()) ? names[static_cast<size_t>(algorithm)]
                                                                        : std::string("?");
}

class CudaBackend : public DeviceBackend {
 public:
  CudaBackend(int device, int processes_on_device, Precision precision)
      : context_(device, processes_on_device, precision), loss_(context_) {}

  std::string name() const override { return context_.description(); }
  Precision precision() const override { return context_.precision(); }
  nlohmann::json properties() const override { return context_.properties(); }
  FloatAllocator allocator() const override { return cuda::allocate_mirrored; }
  std::vector<std::string> tuning_choices() const override {
    return context_.conv_algorithms().lines(cudnn_algorithm_name);
  }
  void synchronize() override { context_.synchronize(); }
  void set_operator_timing(bool on) override { context_.set_wait_each_operation(on); }
  void move_to_host(std::span<float> values) override { cuda::host_mirrors().to_host(values); }
  void move_to_device(std::span<float> values) override { cuda::host_mirrors().to_device(values); }
  std::span<float> device_view(std::span<float> values) override { return context_.on_device(values); }
  void download(std::span<const float> made, std::span<float> host) override {
    DTB_CHECK(host.size() >= made.size(), "downloading {} floats into {}", made.size(), host.size());
    context_.download(made.data(), host.data(), static_cast<int64_t>(made.size()));
  }
  std::unique_ptr<ResidualJoin> residual_join() override { return cuda::make_device_residual_join(context_); }
  std::optional<LossResult> softmax_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                                                  Tensor* grad_logits) override {
    return loss_.compute(logits, labels, grad_logits);
  }
  std::unique_ptr<PhaseMarks> phase_marks(int count) override { return cuda::make_phase_marks(context_, count); }
  std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, int64_t count) override {
    return cuda::make_device_optimizer(context_, config, count);
  }

  std::vector<std::string> twin_kinds() const override {
    return {"linear", "conv2d", "maxpool2d", "avgpool2d", "batchnorm2d", "relu", "tanh", "sigmoid", "dropout"};
  }

  std::unique_ptr<Layer> adopt(std::unique_ptr<Layer> host) override {
    using cuda::PoolTwin;
    Layer* layer = host.get();
    if (dynamic_cast<Linear*>(layer)) return std::make_unique<cuda::LinearTwin>(context_, std::move(host));
    if (dynamic_cast<Conv2d*>(layer)) return std::make_unique<cuda::ConvTwin>(context_, std::move(host));
    if (dynamic_cast<BatchNorm2d*>(layer)) return std::make_unique<cuda::BatchNormTwin>(context_, std::move(host));
    if (dynamic_cast<Dropout*>(layer)) return std::make_unique<cuda::DropoutTwin>(context_, std::move(host));
    if (auto* pool = dynamic_cast<MaxPool2d*>(layer)) {
      return std::make_unique<PoolTwin>(context_, std::move(host), PoolTwin::Kind::Max, pool->kernel(), pool->stride());
    }
    if (auto* pool = dynamic_cast<AvgPool2d*>(layer)) {
      return std::make_unique<PoolTwin>(context_, std::move(host), PoolTwin::Kind::Average, pool->kernel(),
                                        pool->stride());
    }
    if (dynamic_cast<GlobalAvgPool*>(layer)) {
      return std::make_unique<PoolTwin>(context_, std::move(host), PoolTwin::Kind::GlobalAverage, 0, 0);
    }
    if (const auto mode = activation_mode(*layer)) {
      return std::make_unique<cuda::ActivationTwin>(context_, std::move(host), *mode);
    }
    return host;
  }

 private:
  static std::optional<cudnnActivationMode_t> activation_mode(Layer& layer) {
    if (dynamic_cast<ReLU*>(&layer)) return CUDNN_ACTIVATION_RELU;
    if (dynamic_cast<Tanh*>(&layer)) return CUDNN_ACTIVATION_TANH;
    if (dynamic_cast<Sigmoid*>(&layer)) return CUDNN_ACTIVATION_SIGMOID;
    return std::nullopt;
  }

  cuda::CudaContext context_;
  cuda::DeviceLoss loss_;
};

// The ranks of this host under Open MPI or another MPI that says (1 outside a job): with the GPUs
// they spread over, how many processes share each one.
int local_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* value = std::getenv(name); value != nullptr && std::atoi(value) > 0) return std::atoi(value);
  }
  return 1;
}

std::unique_ptr<DeviceBackend> open_cuda(int local_rank, Precision precision) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  std::string why;
  if (status != cudaSuccess) {
    cudaGetLastError();
    why = fmt::format("no usable CUDA device on this machine ({})", cudaGetErrorString(status));
  }
  const int device = status == cudaSuccess ? cuda_plan::pick_device(local_rank, count, why) : -1;
  if (device < 0) fail_input("device 'cuda': {}; use device: cpu", why);
  auto backend =
      std::make_unique<CudaBackend>(device, cuda_plan::processes_per_device(local_ranks(), count), precision);
  spdlog::info("local rank {} runs on {} in {}", local_rank, backend->name(), precision_name(precision));
  return backend;
}

}  // namespace

void register_device_backends() { register_device("cuda", open_cuda); }
bool cuda_backend_built() { return true; }
std::string cuda_backend_toolkit() { return DTBENCH_CUDA_TOOLKIT_VERSION; }

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // a missing driver is no error of the caller's next call
    return 0;
  }
  return count;
}

}  // namespace dtbench
