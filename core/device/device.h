#pragma once
// Where a worker's tensors live and its kernels run: `device: cpu|cuda` in the blueprint. A device
// backend is a folder of its own (core/cuda/) that registers itself here at start-up; the layers,
// models and training loop never branch on it. A model built for a backend swaps each leaf layer
// for the backend's twin of it (sharing the layer's parameters) and residual blocks' joins for the
// backend's, and binds its arena with the backend's allocator: host memory that the backend
// mirrors on the device. The twins and the device's optimizer work on the mirror; everything that
// runs on the host (the transports, checksums, saved weights) works on the host memory, and the
// moves below copy between the two where one side wrote what the other reads next.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/layers/layer.h"
#include "core/layers/loss.h"
#include "core/layers/residual_join.h"
#include "core/optim/optimizer.h"

namespace dtbench {

// Points in a device's queue of work, timed when the device reaches them (CUDA events): the
// training loop marks its phase boundaries with them, so that a phase holds the device work
// queued in it without the loop waiting for the device at each boundary.
class PhaseMarks {
 public:
  virtual ~PhaseMarks() = default;
  // Records mark `index` (0 .. count − 1) behind everything queued so far.
  virtual void record(int index) = 0;
  // Waits until the device has reached mark count − 1; the seconds from mark 0 to each mark.
  virtual std::vector<double> seconds_from_first() = 0;
};

// The arithmetic a device's convolutions and matrix products use: `precision:` in the blueprint.
// fp32: IEEE single precision throughout (every device has it; a GPU's tensor cores stay off).
// tf32: on a GPU with TF32 tensor cores (NVIDIA Ampere and later), products of fp32 values rounded
// to 10 mantissa bits and summed in fp32; the host has no such mode and refuses it.
enum class Precision { Fp32, Tf32 };

// "fp32", "tf32": every precision a blueprint may name.
const std::vector<std::string>& known_precisions();
std::string precision_name(Precision precision);
// The precision `name` names; an InputError naming `where` (the key or flag), the value and the
// choices when it is none.
Precision parse_precision(const std::string& name, const std::string& where);

// Zero-filled float storage; allocate_aligned (core/tensor/tensor.h) is the host's.
using FloatAllocator = std::shared_ptr<float[]> (*)(int64_t count);

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // "cuda:0 (NVIDIA H100 80GB HBM3)": which device this worker uses, for logs and reports.
  virtual std::string name() const = 0;
  // The precision it was opened with (open_device).
  virtual Precision precision() const { return Precision::Fp32; }
  // What a report says of the device: {"name": "cuda:0 (...)", "gpu", "memory_bytes", "driver",
  // "cuda_runtime", "cudnn", ...}, whatever the backend can tell.
  virtual nlohmann::json properties() const { return {{"name", name()}}; }
  // Host floats with a copy on the device (pinned, so the copies run at the bus's rate); a backend
  // whose device is the host's memory gives plain host memory.
  virtual FloatAllocator allocator() const = 0;
  // Takes a configured leaf layer and gives back its device twin, which owns it and shares its
  // parameters and buffers; gives the layer itself back when the backend has no twin for its kind.
  virtual std::unique_ptr<Layer> adopt(std::unique_ptr<Layer> host_layer) = 0;
  // Kinds of layer this backend runs on the device.
  virtual std::vector<std::string> twin_kinds() const = 0;
  // What the backend's own tuning chose so far, one line each (the CUDA backend: cuDNN's algorithm
  // for each convolution shape and direction), for logs and a failing check's message.
  virtual std::vector<std::string> tuning_choices() const { return {}; }
  // Waits until everything queued on the device is done.
  virtual void synchronize() = 0;
  // While on, every twin waits for the device before it returns, so that the host's clock around
  // a layer (profile.operators) holds that layer's device work; off, twins only queue their work
  // and the device is waited for where the host reads what it made.
  virtual void set_operator_timing(bool on) { (void)on; }
  // Copies floats of memory allocator() gave from the device's copy to the host's, before host code
  // reads them (a transport the gradients, a checksum the weights), and from the host's to the
  // device's after host code wrote them (initial, averaged or pulled values). Both return once the
  // copy is done; the device is idle before either (every twin ends synchronised).
  virtual void move_to_host(std::span<float> values) { (void)values; }
  virtual void move_to_device(std::span<float> values) { (void)values; }
  // The device's copy of floats allocator() gave, for code that hands them to the device itself
  // (NCCL); the floats themselves where the device works on host memory.
  virtual std::span<float> device_view(std::span<float> values) { return values; }
  // Copies what a twin made (an output or input gradient, in the device's memory) into host
  // memory, for host code that reads a layer's output: tests, a loss the device does not compute.
  virtual void download(std::span<const float> made, std::span<float> host) {
    std::copy(made.begin(), made.end(), host.begin());
  }
  // A residual block's join that runs where the twins' outputs are; null: the host's.
  virtual std::unique_ptr<ResidualJoin> residual_join() { return nullptr; }
  // The batch's softmax cross-entropy, and its gradient when grad_logits is given, computed on the
  // device (one fused kernel; grad_logits is pointed at the memory it wrote); nullopt leaves it to
  // the host's softmax_cross_entropy (core/layers/loss.h) over the logits.
  virtual std::optional<LossResult> softmax_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                                                          Tensor* grad_logits) {
    (void)logits, (void)labels, (void)grad_logits;
    return std::nullopt;
  }
  // `count` marks for the training loop's phase boundaries; null: the loop waits for the device at
  // each boundary (synchronize()) and reads the host's clock.
  virtual std::unique_ptr<PhaseMarks> phase_marks(int count) {
    (void)count;
    return nullptr;
  }
  // An optimizer whose updates run on the device, over `count` floats this backend allocated;
  // null lets the host's optimizer run over them.
  virtual std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, int64_t count) {
    (void)config;
    (void)count;
    return nullptr;
  }
};

// Opens the backend for the worker with this local rank (a backend with several devices picks
// one by it), computing in `precision`. Throws InputError when this machine cannot run it, or
// cannot compute in that precision, saying why.
using DeviceFactory = std::function<std::unique_ptr<DeviceBackend>(int local_rank, Precision precision)>;

// Every device a blueprint may name, built into this binary or not: "cpu", "cuda".
const std::vector<std::string>& known_devices();
// Those this binary has: "cpu" and every registered backend.
std::vector<std::string> built_devices();
// Registers `factory` under `name` (an empty one removes the name); gives back the one it replaced.
DeviceFactory register_device(const std::string& name, DeviceFactory factory);
// An InputError when `name` is not a known device (naming `where`, the key or flag it came from).
void check_device_name(const std::string& name, const std::string& where);
// "cpu": null (host layers over host memory), in fp32 only: another precision is an InputError
// naming it and the device. Another name: its backend, or an InputError saying whether this build
// lacks it or this machine cannot run it.
std::unique_ptr<DeviceBackend> open_device(const std::string& name, int local_rank,
                                           Precision precision = Precision::Fp32);
// The InputError for a precision the host cannot compute in (`where`: the key or flag), if it is one.
void check_host_precision(Precision precision, const std::string& where);

}  // namespace dtbench
