#include "launch/monitor/provenance.h"

#include <unistd.h>

#include <fstream>
#include <thread>

#include <CLI/Version.hpp>
#include <fmt/format.h>
#include <spdlog/version.h>
#include <zlib.h>

#include "core/device/device.h"
#include "core/util/blas.h"

namespace dtbench {

namespace {

// The first line of `path` that starts with `key`, with the key and separators removed.
std::string field_of(const std::string& path, const std::string& key) {
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

int64_t kib_field(const std::string& path, const std::string& key) {
  const std::string value = field_of(path, key);  // "123456 kB"
  return value.empty() ? 0 : std::stoll(value) * 1024;
}

}  // namespace

Provenance collect_provenance() {
  Provenance p;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  p.hostname = host;
  p.pid = static_cast<int>(getpid());
  p.cpu_model = field_of("/proc/cpuinfo", "model name");
  p.cores = static_cast<int>(std::thread::hardware_concurrency());
  p.memory_bytes = kib_field("/proc/meminfo", "MemTotal");
  p.compiler = fmt::format("g++ {}", __VERSION__);
  p.dtbench_version = DTBENCH_VERSION;
  p.git_commit = DTBENCH_GIT_COMMIT;
  p.blas_core = blas::core_name();
  p.blas_core_selection = blas::core_selection();
  p.blas_config = blas::config();
  p.blas_threads = blas::threads();
  p.libraries = {
      {"fmt", fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)},
      {"spdlog", fmt::format("{}.{}.{}", SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH)},
      {"nlohmann_json", fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR,
                                    NLOHMANN_JSON_VERSION_PATCH)},
      {"CLI11", CLI11_VERSION},
      {"zlib", ZLIB_VERSION},
  };
  return p;
}

nlohmann::json to_json(const Provenance& p) {
  return {{"hostname", p.hostname},       {"pid", p.pid},       {"cpu_model", p.cpu_model},
          {"cores", p.cores},             {"memory_bytes", p.memory_bytes},
          {"compiler", p.compiler},       {"dtbench_version", p.dtbench_version},
          {"git_commit", p.git_commit},   {"blas_core", p.blas_core}, {"blas_core_selection", p.blas_core_selection},
          {"blas_config", p.blas_config}, {"blas_threads", p.blas_threads},
          {"libraries", p.libraries},     {"engine", p.engine},
          {"device", p.device},           {"precision", p.precision}};
}

void record_device(Provenance& provenance, const DeviceBackend* device) {
  provenance.device = device != nullptr ? device->properties() : nlohmann::json{{"name", "cpu"}};
  provenance.precision = precision_name(device != nullptr ? device->precision() : Precision::Fp32);
}

std::string device_text(const nlohmann::json& device) {
  if (!device.is_object()) return "";
  const auto text = [&](const char* key) {
    const auto found = device.find(key);
    return found != device.end() && found->is_string() ? found->get<std::string>() : std::string();
  };
  if (text("gpu").empty()) return text("name");
  std::string line = text("gpu");
  if (const auto bytes = device.find("memory_bytes"); bytes != device.end() && bytes->is_number()) {
    line += fmt::format(", {:.0f} GiB", bytes->get<double>() / (1 << 30));
  }
  for (const auto& [key, label] : {std::pair{"driver", "driver"}, {"cuda_runtime", "CUDA runtime"}, {"cudnn", "cuDNN"}}) {
    if (!text(key).empty()) line += fmt::format(", {} {}", label, text(key));
  }
  return line;
}

int64_t peak_resident_bytes() { return kib_field("/proc/self/status", "VmHWM"); }
int64_t resident_bytes() { return kib_field("/proc/self/status", "VmRSS"); }

std::string version_text() { return fmt::format("dtbench {} (commit {})", DTBENCH_VERSION, DTBENCH_GIT_COMMIT); }

}  // namespace dtbench
