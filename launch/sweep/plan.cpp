#include "launch/sweep/plan.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "core/util/error.h"
#include "launch/blueprint/blueprint.h"
#include "launch/cluster/host_cores.h"
#include "launch/cluster/naming.h"
#include "launch/sweep/child_process.h"

namespace dtbench {

namespace fs = std::filesystem;

namespace {

// A path the sweep file names: absolute as given, relative to the sweep file's folder otherwise.
fs::path beside(const fs::path& sweep_file, const std::string& path) {
  return fs::weakly_canonical(fs::path(path).is_absolute() ? fs::path(path) : sweep_file.parent_path() / path);
}

class SweepReader {
 public:
  explicit SweepReader(fs::path source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& expected) const {
    fail_input("{}: key '{}': expected {}", source_.string(), key, expected);
  }

  std::string scalar(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(key, "a single value");
    return node.as<std::string>();
  }

  template <typename T>
  void read(const YAML::Node& map, const std::string& key, T& out, const std::string& path) const {
    const YAML::Node node = map[key];
    if (!node || node.IsNull()) return;
    try {
      if (!node.IsScalar()) throw YAML::Exception(YAML::Mark(), "");
      out = node.as<T>();
    } catch (const YAML::Exception&) {
      if constexpr (std::is_integral_v<T>) fail(path, "an integer");
      else if constexpr (std::is_floating_point_v<T>) fail(path, "a number");
      else fail(path, "a string");
    }
  }

  void reject_unknown(const YAML::Node& map, const std::string& prefix, const std::vector<std::string>& known) const {
    for (const auto& entry : map) {
      const auto key = entry.first.as<std::string>();
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        fail_input("{}: unknown key '{}{}'; valid keys here: {}", source_.string(), prefix, key, fmt::join(known, ", "));
      }
    }
  }

  // `set:` and blueprint axes use dotted keys, as --set does; a nested mapping is flattened.
  void flatten(const YAML::Node& node, const std::string& prefix, std::vector<std::string>& out) const {
    if (node.IsMap()) {
      for (const auto& entry : node) {
        flatten(entry.second, prefix.empty() ? entry.first.as<std::string>() : prefix + "." + entry.first.as<std::string>(), out);
      }
    } else if (node.IsScalar()) {
      out.push_back(prefix + "=" + node.as<std::string>());
    } else {
      fail(prefix, "a value or a mapping of values");
    }
  }

  SweepAxis axis(const std::string& key, const YAML::Node& node) const {
    const std::string path = "axes." + key;
    SweepAxis axis{.key = key, .values = {}, .assignments = {}};
    if (!node.IsSequence() || node.size() == 0) fail(path, "a list of values");
    for (const auto& item : node) {
      if (item.IsScalar()) {
        axis.values.push_back(item.as<std::string>());
        axis.assignments.push_back({{key, item.as<std::string>()}});
        continue;
      }
      if (!item.IsMap() || !item["label"] || !item["label"].IsScalar()) {
        fail(path, "values, or mappings of keys with a 'label' naming each");
      }
      std::vector<std::string> flat;
      for (const auto& field : item) {
        if (field.first.as<std::string>() != "label") flatten(field.second, field.first.as<std::string>(), flat);
      }
      SweepAxis::Assignments assignments;
      for (const auto& assignment : flat) {
        const size_t equals = assignment.find('=');
        assignments.emplace_back(assignment.substr(0, equals), assignment.substr(equals + 1));
      }
      axis.values.push_back(item["label"].as<std::string>());
      axis.assignments.push_back(std::move(assignments));
    }
    return axis;
  }

  SweepSynthesis synthesis(const YAML::Node& node) const {
    if (!node.IsMap()) fail("synthesize", "a mapping with format, train, test and path (or a list of them)");
    reject_unknown(node, "synthesize.", {"format", "train", "test", "path"});
    SweepSynthesis s;
    read(node, "format", s.format, "synthesize.format");
    read(node, "train", s.train, "synthesize.train");
    read(node, "test", s.test, "synthesize.test");
    read(node, "path", s.path, "synthesize.path");
    if (s.path.empty()) fail("synthesize.path", "the directory to write the data set into");
    if (s.train < 1 || s.test < 1) fail("synthesize.train", "sample counts >= 1");
    return s;
  }

  std::vector<std::string> string_list(const YAML::Node& node, const std::string& key) const {
    std::vector<std::string> values;
    if (!node || node.IsNull()) return values;
    if (node.IsScalar()) return {node.as<std::string>()};
    if (!node.IsSequence()) fail(key, "a value or a list of values");
    for (const auto& item : node) values.push_back(scalar(item, key));
    return values;
  }

 private:
  fs::path source_;
};

int64_t positive_integer(const fs::path& source, const std::string& key, const std::string& text) {
  try {
    size_t used = 0;
    const int64_t value = std::stoll(text, &used);
    if (used == text.size() && value >= 1) return value;
  } catch (const std::exception&) {
  }
  fail_input("{}: '{}' value '{}': expected an integer >= 1", source.string(), key, text);
}

// "configs/study/resnet18-cifar10.yaml" -> "resnet18-cifar10": blueprint values name directories.
std::string id_value(const std::string& key, const std::string& value) {
  if (key != "blueprint") return value;
  return fs::path(value).stem().string();
}

// Configuration ids and the sweep's name become directory names: one path component each.
void require_directory_name(const fs::path& source, const std::string& what, const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    fail_input("{}: {} '{}' names a directory: it must be non-empty, without '/', and not '.' or '..'",
               source.string(), what, name);
  }
}

// Sweep data paths and blueprint data paths are compared as the same directory however written.
fs::path normal(const fs::path& path) { return fs::absolute(path).lexically_normal(); }

// Longer caps are surely mistakes; the bound also keeps deadlines far from clock overflow.

}  // namespace

const std::vector<std::string>& sweep_metric_names() {
  static const std::vector<std::string> names = {"run_s",     "process_s",  "epoch_s",     "images_per_s",
                                                 "test_accuracy", "step_ms", "load_ms",     "forward_ms",
                                                 "backward_ms",  "comm_ms",   "update_ms",   "other_ms"};
  return names;
}

double SweepCluster::resolved_cores_per_host() const {
  return cores_per_host > 0 ? cores_per_host
                            : static_cast<double>(cluster::allowed_cpus().size()) / static_cast<double>(hosts);
}

std::string SweepCluster::label() const {
  const double cores = resolved_cores_per_host();
  return fmt::format("{} host{} x {} slot{} x {:.3g} core(s), link {}", hosts, hosts == 1 ? "" : "s", slots,
                     slots == 1 ? "" : "s", cores, link);
}

const std::string* SweepConfiguration::value_of(const std::string& axis) const {
  for (const auto& [key, value] : values) {
    if (key == axis) return &value;
  }
  return nullptr;
}

namespace {

YAML::Node load_sweep_yaml(const fs::path& file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    fail_input("sweep {}: cannot open it (does the file exist?)", file.string());
  } catch (const YAML::Exception& error) {
    fail_input("sweep {}: not valid YAML: {}", file.string(), error.what());
  }
  if (!root.IsMap()) fail_input("sweep {}: expected a mapping of keys at the top", file.string());
  return root;
}

// The sweep's own scalar keys and the `set:` overrides, each checked.
void read_sweep_settings(const SweepReader& reader, const YAML::Node& root, SweepBlueprint& sweep) {
  reader.read(root, "name", sweep.name, "name");
  std::string base;
  reader.read(root, "base", base, "base");
  if (!base.empty()) sweep.base = beside(sweep.source, base);
  if (root["set"] && !root["set"].IsNull()) {
    if (!root["set"].IsMap()) reader.fail("set", "a mapping of blueprint keys to values");
    reader.flatten(root["set"], "", sweep.overrides);
  }
  reader.read(root, "workers", sweep.workers, "workers");
  reader.read(root, "servers", sweep.servers, "servers");
  sweep.workers_given = root["workers"] && !root["workers"].IsNull();
  sweep.servers_given = root["servers"] && !root["servers"].IsNull();
  reader.read(root, "repetitions", sweep.repetitions, "repetitions");
  reader.read(root, "warmup", sweep.warmup, "warmup");
  reader.read(root, "cap_s", sweep.cap_s, "cap_s");
  reader.read(root, "output", sweep.output, "output");
  if (sweep.workers < 1) reader.fail("workers", "an integer >= 1");
  if (sweep.servers < 1) reader.fail("servers", "an integer >= 1");
  if (sweep.repetitions < 1) reader.fail("repetitions", "an integer >= 1");
  if (sweep.warmup < 0) reader.fail("warmup", "an integer >= 0");
  if (!(sweep.cap_s > 0 && sweep.cap_s <= kLongestCapSeconds)) reader.fail("cap_s", "a number of seconds > 0, at most 30 days");
  require_directory_name(sweep.source, "name", sweep.name);
}

// A cluster's hosts, slots or link, from launch.cluster or an axis; InputError naming `key`.
void set_cluster_field(const fs::path& source, const std::string& key, const std::string& field,
                       const std::string& value, SweepCluster& cluster) {
  if (field == "link") {
    try {
      cluster::parse_link_rate(value);
    } catch (const InputError& error) {
      fail_input("{}: '{}': {}", source.string(), key, error.what());
    }
    cluster.link = value;
    return;
  }
  if (field == "cores_per_host") {
    double cores = 0;
    try {
      size_t used = 0;
      cores = std::stod(value, &used);
      if (used != value.size()) cores = 0;
    } catch (const std::exception&) {
    }
    if (!(cores >= 0.01)) fail_input("{}: '{}' value '{}': expected a number of cores, at least 0.01 (0.5: half a core)",
                                     source.string(), key, value);
    cluster.cores_per_host = cores;
    return;
  }
  const int64_t number = positive_integer(source, key, value);
  if (field == "hosts" && number > cluster::kMaxHosts) {
    fail_input("{}: '{}' value {}: expected at most {} hosts", source.string(), key, number, cluster::kMaxHosts);
  }
  (field == "hosts" ? cluster.hosts : cluster.slots) = number;
}

bool is_cluster_field(const std::string& key) {
  return key == "hosts" || key == "slots" || key == "link" || key == "cores_per_host";
}

std::optional<SweepCluster> read_cluster(const SweepReader& reader, const fs::path& source, const YAML::Node& node) {
  if (!node || node.IsNull()) return std::nullopt;
  if (!node.IsMap()) reader.fail("launch.cluster", "a mapping with hosts, and optionally link, slots and cores_per_host");
  reader.reject_unknown(node, "launch.cluster.", {"hosts", "slots", "link", "cores_per_host"});
  SweepCluster cluster;
  for (const char* field : {"hosts", "slots", "link", "cores_per_host"}) {
    if (node[field]) set_cluster_field(source, std::string("launch.cluster.") + field, field,
                                       reader.scalar(node[field], std::string("launch.cluster.") + field), cluster);
  }
  return cluster;
}

void read_launch(const SweepReader& reader, const fs::path& source, const YAML::Node& launch, SweepLaunch& out) {
  if (!launch || launch.IsNull()) return;
  if (!launch.IsMap()) reader.fail("launch", "a mapping");
  reader.reject_unknown(launch, "launch.", {"mpirun", "hostfile", "mpirun_args", "ps_host", "cluster"});
  reader.read(launch, "mpirun", out.mpirun, "launch.mpirun");
  reader.read(launch, "hostfile", out.hostfile, "launch.hostfile");
  reader.read(launch, "ps_host", out.ps_host, "launch.ps_host");
  out.mpirun_args = reader.string_list(launch["mpirun_args"], "launch.mpirun_args");
  out.cluster = read_cluster(reader, source, launch["cluster"]);
  if (out.cluster && (launch["hostfile"] || launch["ps_host"])) {
    reader.fail("launch.cluster", "no launch.hostfile or launch.ps_host beside it: the cluster places the processes");
  }
}

std::optional<SweepComparison> read_compare(const SweepReader& reader, const YAML::Node& compare,
                                            const std::vector<SweepAxis>& axes) {
  if (!compare || compare.IsNull()) return std::nullopt;
  if (!compare.IsMap()) reader.fail("compare", "a mapping with axis and baseline");
  reader.reject_unknown(compare, "compare.", {"axis", "baseline", "metric", "test"});
  SweepComparison c;
  reader.read(compare, "axis", c.axis, "compare.axis");
  reader.read(compare, "baseline", c.baseline, "compare.baseline");
  reader.read(compare, "metric", c.metric, "compare.metric");
  reader.read(compare, "test", c.test, "compare.test");
  const auto axis = std::find_if(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.key == c.axis; });
  if (axis == axes.end()) reader.fail("compare.axis", "one of the sweep's axes");
  if (std::find(axis->values.begin(), axis->values.end(), c.baseline) == axis->values.end()) {
    reader.fail("compare.baseline", fmt::format("one of the values of axis '{}': {}", c.axis, fmt::join(axis->values, ", ")));
  }
  if (c.test != "mann-whitney" && c.test != "wilcoxon") reader.fail("compare.test", "mann-whitney or wilcoxon");
  const auto& metrics = sweep_metric_names();
  if (std::find(metrics.begin(), metrics.end(), c.metric) == metrics.end()) {
    reader.fail("compare.metric", fmt::format("one of {}", fmt::join(metrics, ", ")));
  }
  return c;
}

// Every point of the grid: per axis, the index of its value.
std::vector<std::vector<size_t>> grid_points(const std::vector<SweepAxis>& axes) {
  std::vector<std::vector<size_t>> points{{}};
  for (const auto& axis : axes) {
    std::vector<std::vector<size_t>> next;
    for (const auto& point : points) {
      for (size_t v = 0; v < axis.values.size(); ++v) {
        next.push_back(point);
        next.back().push_back(v);
      }
    }
    points = std::move(next);
  }
  return points;
}

// One worker per slot and one shard per host unless the file says otherwise; never more workers
// than slots, which mpirun would refuse.
void place_on_cluster(const fs::path& source, bool workers_given, bool servers_given, SweepConfiguration& c) {
  const int64_t slots = c.cluster->hosts * c.cluster->slots;
  if (!workers_given) c.workers = slots;
  if (!servers_given) c.servers = c.cluster->hosts;
  if (c.workers > slots) {
    fail_input("{}: configuration {}: {} workers on {}: at most one per slot", source.string(), c.id, c.workers,
               c.cluster->label());
  }
}

constexpr std::string_view kMcaPrefix = "mca.";

// `mca.NAME: VALUE` as the pair mpirun takes (--mca NAME VALUE); InputError naming `where`.
std::pair<std::string, std::string> mca_setting(const fs::path& source, const std::string& where,
                                                const std::string& key, const std::string& value) {
  const std::string name = key.substr(kMcaPrefix.size());
  const bool well_formed = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
  });
  if (!well_formed) {
    fail_input("{}: '{}': expected an Open MPI parameter name after 'mca.' (letters a-z, digits, '_'), e.g. "
               "mca.btl_tcp_links",
               source.string(), where);
  }
  if (value.empty()) fail_input("{}: '{}': expected a value", source.string(), where);
  return {name, value};
}

// The configuration at one point of the grid: its values, overrides, sizes and id.
SweepConfiguration configuration_at(const SweepBlueprint& sweep, const std::vector<size_t>& point) {
  SweepConfiguration c;
  c.base = sweep.base;
  c.overrides = sweep.overrides;
  c.workers = sweep.workers;
  c.servers = sweep.servers;
  c.cluster = sweep.launch.cluster;
  bool workers_given = sweep.workers_given, servers_given = sweep.servers_given;
  std::vector<std::string> id;
  for (size_t a = 0; a < sweep.axes.size(); ++a) {
    const SweepAxis& axis = sweep.axes[a];
    c.values.emplace_back(axis.key, axis.values[point[a]]);
    id.push_back(axis.key + "=" + id_value(axis.key, axis.values[point[a]]));
    for (const auto& [key, value] : axis.assignments[point[a]]) {
      if (key == "blueprint") {
        c.base = beside(sweep.source, value);
      } else if (key == "workers") {
        c.workers = positive_integer(sweep.source, "axes." + axis.key + ".workers", value);
        workers_given = true;
      } else if (key == "servers") {
        c.servers = positive_integer(sweep.source, "axes." + axis.key + ".servers", value);
        servers_given = true;
      } else if (key.starts_with(kMcaPrefix)) {
        const std::string where = key == axis.key ? "axes." + key : "axes." + axis.key + "." + key;
        c.mca.emplace_back(mca_setting(sweep.source, where, key, value));
      } else if (is_cluster_field(key)) {
        if (!c.cluster) fail_input("{}: axis '{}' sets {}, which needs launch.cluster", sweep.source.string(), axis.key, key);
        set_cluster_field(sweep.source, "axes." + axis.key, key, value, *c.cluster);
      } else {
        c.overrides.push_back(key + "=" + value);
      }
    }
  }
  c.id = id.empty() ? "default" : fmt::format("{}", fmt::join(id, ","));
  require_directory_name(sweep.source, "configuration", c.id);
  if (c.cluster) place_on_cluster(sweep.source, workers_given, servers_given, c);
  return c;
}

// Resolves the configuration's blueprint now, so a typo fails the sweep before its first run, not
// its tenth, and says what a run would miss (mpirun, the data set).
void resolve_configuration(const SweepBlueprint& sweep, bool have_mpirun, SweepConfiguration& c) {
  // ps transports need servers in the blueprint; the runner fills in the real addresses.
  std::vector<std::string> check = c.overrides;
  check.push_back(fmt::format("ps.servers={}:1", sweep.launch.ps_host));
  Blueprint bp;
  try {
    bp = c.base.empty() ? parse_blueprint(std::string(default_blueprint_text()), "built-in blueprint", check)
                        : load_blueprint(c.base.string(), check);
  } catch (const InputError& error) {
    fail_input("sweep {}, configuration {}: {}", sweep.source.string(), c.id, error.what());
  }
  c.transport = bp.transport;
  c.engine = bp.engine;
  const bool synthesized_later = std::any_of(sweep.synthesize.begin(), sweep.synthesize.end(),
                                             [&](const SweepSynthesis& s) { return normal(s.path) == normal(bp.data.path); });
  if (exchanges_nothing(c.transport) && c.workers > 1) {
    c.missing = fmt::format("transport none trains one worker, not {}", c.workers);
  } else if (c.needs_mpirun() && !have_mpirun) {
    c.missing = fmt::format("{} not found (launch.mpirun): needed for transport {} with {} worker(s)",
                            sweep.launch.mpirun, c.transport, c.workers);
  } else if (!synthesized_later && !fs::exists(bp.data.path)) {
    c.missing = fmt::format("dataset.path {} does not exist", bp.data.path);
  }
}

}  // namespace

SweepBlueprint load_sweep(const fs::path& file, const std::vector<std::string>& extra_overrides) {
  const YAML::Node root = load_sweep_yaml(file);
  const SweepReader reader(file);
  reader.reject_unknown(root, "", {"name", "base", "set", "axes", "workers", "servers", "repetitions", "warmup",
                                   "cap_s", "launch", "synthesize", "compare", "output"});
  SweepBlueprint sweep;
  sweep.source = file;
  sweep.name = file.stem().string();
  read_sweep_settings(reader, root, sweep);
  sweep.overrides.insert(sweep.overrides.end(), extra_overrides.begin(), extra_overrides.end());
  if (const YAML::Node axes = root["axes"]; axes && !axes.IsNull()) {
    if (!axes.IsMap()) reader.fail("axes", "a mapping of keys to lists of values");
    for (const auto& entry : axes) sweep.axes.push_back(reader.axis(entry.first.as<std::string>(), entry.second));
  }
  read_launch(reader, file, root["launch"], sweep.launch);
  if (const YAML::Node synth = root["synthesize"]; synth && !synth.IsNull()) {
    if (synth.IsSequence()) {
      for (const auto& item : synth) sweep.synthesize.push_back(reader.synthesis(item));
    } else {
      sweep.synthesize.push_back(reader.synthesis(synth));
    }
  }
  sweep.compare = read_compare(reader, root["compare"], sweep.axes);
  return sweep;
}

std::vector<SweepConfiguration> expand_sweep(const SweepBlueprint& sweep) {
  const bool have_mpirun = !find_program(sweep.launch.mpirun).empty();
  std::vector<SweepConfiguration> configurations;
  for (const auto& point : grid_points(sweep.axes)) {
    SweepConfiguration c = configuration_at(sweep, point);
    for (const auto& other : configurations) {
      if (other.id == c.id) {
        fail_input("{}: two configurations are both named {} (a value repeated on an axis, two labels alike, or "
                   "two blueprints with the same file name): give each value a distinct label",
                   sweep.source.string(), c.id);
      }
    }
    resolve_configuration(sweep, have_mpirun, c);
    configurations.push_back(std::move(c));
  }
  return configurations;
}

}  // namespace dtbench
