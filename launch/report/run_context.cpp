#include "launch/report/run_context.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "launch/monitor/provenance.h"

namespace dtbench {

namespace {

using nlohmann::json;

// `object[key]` when it holds a T, else `fallback`: a report from an older dtbench lacks fields.
template <typename T>
T lenient(const json& object, const char* key, T fallback) {
  if (!object.is_object() || !object.contains(key)) return fallback;
  try {
    return object.at(key).get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

const json& member(const json& object, const char* key) {
  static const json empty = json::object();
  return object.is_object() && object.contains(key) && object.at(key).is_object() ? object.at(key) : empty;
}

}  // namespace

int RunContext::most_workers_on_a_host(int world) const {
  if (hosts.size() < static_cast<size_t>(world)) return world;  // unknown: assume one host
  std::map<std::string, int> per_host;
  for (const auto& host : hosts) ++per_host[host];
  int most = 0;
  for (const auto& [host, workers] : per_host) most = std::max(most, workers);
  return most;
}

bool RunContext::hosts_share_cores() const {
  return emulated_cluster && (time_sliced || (host_cores > 0 && host_cores != std::floor(host_cores)));
}

RunContext run_context(const json& report) {
  const json& blueprint = member(report, "blueprint");
  const json& data = member(report, "data");
  const json& model = member(report, "model");
  const json& provenance = member(report, "provenance");
  const json& straggler = member(blueprint, "straggler");
  RunContext c;
  c.model = lenient<std::string>(model, "name", lenient<std::string>(blueprint, "model", ""));
  c.parameters = lenient<int64_t>(model, "parameters", 0);
  c.batch = lenient<int64_t>(blueprint, "batch", 0);
  c.data_path = lenient<std::string>(data, "path", "");
  c.data_format = lenient<std::string>(data, "format", "");
  c.synthetic = lenient<bool>(data, "synthetic", false);
  c.threads = lenient<int>(provenance, "blas_threads", 0);
  c.cores = lenient<int>(provenance, "cores", 0);
  c.cpu_model = lenient<std::string>(provenance, "cpu_model", "");
  c.blas_core = lenient<std::string>(provenance, "blas_core", "");
  c.commit = lenient<std::string>(provenance, "git_commit", "");
  c.torch_settings = lenient<std::string>(member(provenance, "engine"), "settings", "");
  c.conv_algorithms = lenient<std::string>(member(member(provenance, "engine"), "conv_algorithms"), "summary", "");
  c.device = device_text(member(provenance, "device"));
  c.precision = lenient<std::string>(provenance, "precision", "");
  if (const auto host = lenient<std::string>(provenance, "hostname", ""); !host.empty()) c.hosts = {host};
  c.straggler_rank = lenient<int>(straggler, "rank", -1);
  c.straggler_delay_ms = lenient<double>(straggler, "delay_ms", 0.0);
  c.steps_limit = lenient<int64_t>(blueprint, "steps", 0);
  c.link = lenient<std::string>(member(member(report, "network"), "cluster"), "link", "");
  const json& cluster = member(member(report, "network"), "cluster");
  c.emulated_cluster = !cluster.empty();
  c.host_cores = lenient<double>(cluster, "cores_per_host", 0.0);
  c.time_sliced = lenient<bool>(cluster, "time_sliced", false);
  c.filler_cores = lenient<double>(cluster, "filler_cores", 0.0);
  c.overlapped = lenient<bool>(member(report, "transport_summary"), "overlap", false);
  if (const json& network = member(report, "network"); network.contains("mpi_yield_when_idle") &&
                                                         network.at("mpi_yield_when_idle").is_boolean()) {
    c.ranks_yield = network.at("mpi_yield_when_idle").get<bool>();
  }
  return c;
}

}  // namespace dtbench
