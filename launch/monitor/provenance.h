#pragma once
// Where a result came from: machine, software, data. Every report carries it, so a figure can be
// traced to the CPU, BLAS kernel, thread count and commit that produced it.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace dtbench {

class DeviceBackend;

struct Provenance {
  std::string hostname;
  int pid = 0;
  std::string cpu_model;
  int cores = 0;
  int64_t memory_bytes = 0;
  std::string compiler;
  std::string dtbench_version;
  std::string git_commit;
  std::string blas_core;
  std::string blas_core_selection;
  std::string blas_config;
  int blas_threads = 0;
  nlohmann::json libraries;  // name -> version
  // Who trained: {"name": "dtbench"}, or the pytorch engine's name, torch version and the final
  // weights' checksum (engines/pytorch/torch_worker.h).
  nlohmann::json engine = {{"name", "dtbench"}};
  // Where the layers ran: {"name": "cpu"}, or a GPU's properties (DeviceBackend::properties: gpu,
  // memory_bytes, driver, cuda_runtime, cudnn, ...); and in what precision ("fp32", "tf32").
  nlohmann::json device = {{"name", "cpu"}};
  std::string precision = "fp32";
};

// Fills provenance's device and precision from the backend a run opened (null: the host, fp32).
void record_device(Provenance& provenance, const DeviceBackend* device);
// One line for a header: "cpu", or "NVIDIA H100 80GB HBM3, 80 GiB, driver 580.159.04, CUDA runtime
// 13.0, cuDNN 9.10.2" from provenance's device (what it holds of that).
std::string device_text(const nlohmann::json& device);

Provenance collect_provenance();
// "dtbench 0.1.0 (commit 88fc4b01a2b3)", for --version.
std::string version_text();
nlohmann::json to_json(const Provenance& provenance);

// Peak and current resident memory of this process, from /proc/self/status (bytes).
int64_t peak_resident_bytes();
int64_t resident_bytes();

}  // namespace dtbench
