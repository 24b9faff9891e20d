// The device seam against the CPU: `device:` names, the refusal of `cuda` where it cannot run, and
// a model built for a backend (here a stand-in whose twins run the host layers) keeping its names,
// layout and numbers while its leaf layers run through the twins.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "core/cuda/register.h"
#include "core/device/device.h"
#include "core/layers/loss.h"
#include "core/layers/sequential.h"
#include "core/models/models.h"
#include "core/util/error.h"
#include "core/util/rng.h"
#include "tests/support/wrapping_twin.h"

namespace dtbench {
namespace {

int g_allocations = 0;
std::shared_ptr<float[]> counting_allocate(int64_t count) {
  ++g_allocations;
  return allocate_aligned(count);
}

// A twin that runs its host layer and counts the calls.
class CountingTwin : public testing::WrappingTwin {
 public:
  CountingTwin(std::unique_ptr<Layer> host, std::map<std::string, int>& calls)
      : WrappingTwin(std::move(host)), calls_(calls) {}

 protected:
  void on_call(const std::string& pass) override { ++calls_[kind() + " " + pass]; }

 private:
  std::map<std::string, int>& calls_;
};

class HostTwinBackend : public DeviceBackend {
 public:
  std::string name() const override { return "host-twins"; }
  FloatAllocator allocator() const override { return counting_allocate; }
  std::vector<std::string> twin_kinds() const override { return {"conv2d", "linear"}; }
  void synchronize() override {}
  std::unique_ptr<Layer> adopt(std::unique_ptr<Layer> host) override {
    const std::string kind = host->kind();
    if (kind != "conv2d" && kind != "linear") return host;
    ++adopted[kind];
    return std::make_unique<CountingTwin>(std::move(host), calls);
  }
  std::map<std::string, int> adopted, calls;
};

TEST(Device, NamesAreCheckedAndCpuIsTheHost) {
  EXPECT_EQ(open_device("cpu", 0), nullptr);
  EXPECT_NO_THROW(check_device_name("cuda", "device"));
  try {
    check_device_name("tpu", "blueprint.yaml: device");
    FAIL() << "tpu accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("blueprint.yaml: device: unknown device 'tpu'; expected one of cpu, cuda"),
              std::string::npos) << error.what();
  }
}

TEST(Device, PrecisionsAreNamedAndTheHostHasFp32Only) {
  EXPECT_EQ(parse_precision("fp32", "precision"), Precision::Fp32);
  EXPECT_EQ(parse_precision("tf32", "precision"), Precision::Tf32);
  EXPECT_EQ(precision_name(Precision::Tf32), "tf32");
  try {
    parse_precision("fp16", "--precision");
    FAIL() << "fp16 accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("--precision: unknown precision 'fp16'; expected one of fp32, tf32"),
              std::string::npos) << error.what();
  }
  EXPECT_EQ(open_device("cpu", 0, Precision::Fp32), nullptr);
  try {
    open_device("cpu", 0, Precision::Tf32);
    FAIL() << "tf32 accepted on the cpu";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("precision: 'tf32' is not available on device 'cpu', which computes in "
                                             "fp32 only"),
              std::string::npos) << error.what();
  }
}

// A backend is opened with the run's precision: a stand-in registered as `cuda` records what its
// factory was given (the real backend is registered again afterwards).
TEST(Device, TheBackendIsOpenedWithThePrecision) {
  struct Opened {
    int local_rank = -1;
    std::optional<Precision> precision;
  } opened;
  register_device_backends();
  DeviceFactory real = register_device("cuda", [&opened](int local_rank, Precision precision) {
    opened = {local_rank, precision};
    return std::unique_ptr<DeviceBackend>(std::make_unique<HostTwinBackend>());
  });
  const auto tf32 = open_device("cuda", 3, Precision::Tf32);
  EXPECT_EQ(opened.local_rank, 3);
  EXPECT_EQ(opened.precision, Precision::Tf32);
  open_device("cuda", 0);
  EXPECT_EQ(opened.precision, Precision::Fp32);  // the default
  register_device("cuda", std::move(real));
  EXPECT_EQ(tf32->precision(), Precision::Fp32) << "a backend that does not say otherwise computes in fp32";
}

// Without the CUDA build, or without a GPU, `cuda` is an InputError saying which.
TEST(Device, CudaIsRefusedWithTheReasonWhereItCannotRun) {
  register_device_backends();
  std::string message;
  try {
    auto device = open_device("cuda", 0);
    GTEST_SKIP() << "a GPU is present: " << device->name();
  } catch (const InputError& error) {
    message = error.what();
  }
  if (cuda_backend_built()) {
    EXPECT_NE(message.find("device 'cuda': no"), std::string::npos) << message;
  } else {
    EXPECT_NE(message.find("device 'cuda': this dtbench was built without it"), std::string::npos) << message;
  }
  EXPECT_NE(message.find("device: cpu"), std::string::npos) << message;
}

TEST(Device, AModelOnABackendRunsItsTwinsWithTheSameNamesLayoutAndNumbers) {
  HostTwinBackend backend;
  g_allocations = 0;
  auto host = models::build("lenet5", {1, 28, 28}, 10);
  auto twinned = models::build("lenet5", {1, 28, 28}, 10, &backend);
  EXPECT_EQ(g_allocations, 2);  // the arena's values and gradients came from the backend
  EXPECT_EQ(backend.adopted["conv2d"], 2);
  EXPECT_EQ(backend.adopted["linear"], 3);
  EXPECT_EQ(twinned->device(), &backend);
  ASSERT_EQ(twinned->layers().size(), host->layers().size());
  for (size_t i = 0; i < host->layers().size(); ++i) {
    EXPECT_EQ(twinned->layers()[i].path, host->layers()[i].path);
    EXPECT_EQ(twinned->layers()[i].kind, host->layers()[i].kind);
  }
  ASSERT_EQ(twinned->arena().params().size(), host->arena().params().size());
  for (size_t i = 0; i < host->arena().params().size(); ++i) {
    EXPECT_EQ(twinned->arena().params()[i]->name, host->arena().params()[i]->name);
    EXPECT_EQ(twinned->arena().params()[i]->offset, host->arena().params()[i]->offset);
  }

  host->initialize(5);
  twinned->initialize(5);
  Tensor batch({3, 1, 28, 28});
  Rng rng(2);
  for (float& x : batch.span()) x = rng.normal();
  const std::vector<int32_t> labels{1, 7, 3};
  for (Model* model : {host.get(), twinned.get()}) {
    Tensor grad;
    softmax_cross_entropy(model->forward(batch, Mode::Train), labels, &grad);
    model->backward(grad);
  }
  EXPECT_EQ(backend.calls["conv2d forward"], 2);
  EXPECT_EQ(backend.calls["linear backward"], 3);
  const auto host_grads = host->arena().grads(), twin_grads = twinned->arena().grads();
  for (size_t i = 0; i < host_grads.size(); ++i) ASSERT_EQ(twin_grads[i], host_grads[i]) << i;
}

// A join that counts its calls and runs the host's.
class CountingJoin : public ResidualJoin {
 public:
  explicit CountingJoin(std::map<std::string, int>& calls) : calls_(calls) {}
  const Tensor& forward(const Tensor& main, const Tensor& shortcut) override {
    ++calls_["forward"];
    return host_->forward(main, shortcut);
  }
  Tensor& backward(Tensor& grad_output) override {
    ++calls_["backward"];
    return host_->backward(grad_output);
  }
  void accumulate(Tensor& sum, const Tensor& other) override {
    ++calls_["accumulate"];
    host_->accumulate(sum, other);
  }

 private:
  std::map<std::string, int>& calls_;
  std::unique_ptr<ResidualJoin> host_ = make_host_residual_join();
};

class JoiningBackend : public HostTwinBackend {
 public:
  std::unique_ptr<ResidualJoin> residual_join() override {
    ++joins;
    return std::make_unique<CountingJoin>(join_calls);
  }
  int joins = 0;
  std::map<std::string, int> join_calls;
};

// ResNet-18's eight residual blocks join their branches with the backend's join (a device's runs
// where its twins' outputs are), every call of the step going through it, and the step's numbers
// are the host's.
TEST(Device, ResidualBlocksJoinTheirBranchesWithTheBackendsJoin) {
  JoiningBackend backend;
  auto host = models::build("resnet18", {3, 16, 16}, 10);
  auto joined = models::build("resnet18", {3, 16, 16}, 10, &backend);
  EXPECT_EQ(backend.joins, 8);
  host->initialize(4);
  joined->initialize(4);
  Tensor batch({2, 3, 16, 16});
  Rng rng(3);
  for (float& x : batch.span()) x = rng.normal();
  const std::vector<int32_t> labels{2, 9};
  for (Model* model : {host.get(), joined.get()}) {
    Tensor grad;
    model->loss(model->forward(batch, Mode::Train), labels, &grad);
    model->backward(grad);
  }
  EXPECT_EQ(backend.join_calls["forward"], 8);
  EXPECT_EQ(backend.join_calls["backward"], 8);
  EXPECT_EQ(backend.join_calls["accumulate"], 8);  // every block's input gradient (the stem's is needed)
  const auto host_grads = host->arena().grads(), joined_grads = joined->arena().grads();
  for (size_t i = 0; i < host_grads.size(); ++i) ASSERT_EQ(joined_grads[i], host_grads[i]) << i;
}

// A composite the device seam does not know (neither sequential nor residual) is refused by name
// when a model is built for a device, rather than left running on the host unnoticed.
class Pair : public Layer {
 public:
  std::string kind() const override { return "pair"; }
  Shape configure(const Shape& sample_input) override { return sample_input; }
  const Tensor& forward(const Tensor& input, Mode) override { return input; }
  Tensor& backward(Tensor& grad_output) override { return grad_output; }
  std::vector<std::pair<std::string, Layer*>> children() override { return {{"inner", &inner_}}; }

 private:
  Sequential inner_;
};

TEST(Device, ACompositeTheSeamDoesNotKnowIsRefusedNamingIt) {
  HostTwinBackend backend;
  Sequential net;
  net.emplace<Pair>("odd");
  try {
    net.adopt_twins(backend);
    FAIL() << "an unknown composite was accepted";
  } catch (const LogicError& error) {
    EXPECT_NE(std::string(error.what()).find("composite odd (pair) cannot take a device's twins"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace dtbench
