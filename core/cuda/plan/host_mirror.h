#pragma once
// Host floats with a copy on the device: the backend's allocator gives host memory (pinned) that
// host code reads and writes — the transports, checksums, initial and saved weights — and keeps a
// device block of the same size beside it, on which the twins and the device's optimizer work.
// This registry maps a range of host floats to its device copy and moves ranges between the two;
// the copying itself is the backend's (a CUDA copy on its stream), handed in, so the mapping and
// the staging are plain C++ and tested on the CPU with memcpy as the copy.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <span>

namespace dtbench::cuda_plan {

// Copies `count` floats from `from` to `to` (host to device or device to host) and returns once done.
using FloatCopy = std::function<void(float* to, const float* from, int64_t count)>;

class HostMirrors {
 public:
  HostMirrors(FloatCopy to_device, FloatCopy to_host);
  // Registers a host block of `count` floats and its device copy (distinct blocks never overlap).
  void add(const float* host, float* device, int64_t count);
  // Forgets the block that starts at `host`.
  void remove(const float* host);
  // The device copy of `values`, which must lie within one registered block; otherwise a
  // LogicError naming the pointer (host code handed the device memory the backend did not give).
  float* device_address(const float* host, int64_t count) const;
  std::span<float> device_view(std::span<float> values) const {
    return {device_address(values.data(), static_cast<int64_t>(values.size())), values.size()};
  }
  // Copies the floats from the host's block to the device's copy, or back; an empty span moves
  // nothing.
  void to_device(std::span<const float> values) const;
  void to_host(std::span<float> values) const;
  int64_t blocks() const;

 private:
  struct Block {
    float* device;
    int64_t count;
  };
  FloatCopy copy_to_device_, copy_to_host_;
  mutable std::mutex mutex_;
  std::map<const float*, Block> blocks_;  // by host start
};

}  // namespace dtbench::cuda_plan
