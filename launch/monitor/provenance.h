#pragma once
// Where a result came from: machine, software, data. Every report carries it, so a figure can be
// traced to the CPU, BLAS kernel, thread count and commit that produced it.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace dtbench {

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
  // weights' checksum (core/pytorch/torch_worker.h).
  nlohmann::json engine = {{"name", "dtbench"}};
};

Provenance collect_provenance();
// "dtbench 0.1.0 (commit 88fc4b01a2b3)", for --version.
std::string version_text();
nlohmann::json to_json(const Provenance& provenance);

// Peak and current resident memory of this process, from /proc/self/status (bytes).
int64_t peak_resident_bytes();
int64_t resident_bytes();

}  // namespace dtbench
