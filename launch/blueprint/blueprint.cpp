#include "launch/blueprint/blueprint.h"

#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm/transport_catalogue.h"
#include "core/device/device.h"
#include "core/models/models.h"
#include "core/util/error.h"
#include "core/util/files.h"
#include "launch/blueprint/default_blueprint.h"

namespace dtbench {

namespace {

// Reads one mapping, remembering which keys were read so the rest can be reported as unknown.
class Section {
 public:
  Section(const YAML::Node& node, std::string source, std::string prefix)
      : node_(node), source_(std::move(source)), prefix_(std::move(prefix)) {
    if (node_ && !node_.IsMap()) fail("", "a mapping of keys", node_);
  }

  template <typename T>
  void read(const std::string& key, T& out) {
    known_.push_back(key);
    const YAML::Node value = node_ ? node_[key] : YAML::Node();
    if (!value || value.IsNull()) return;  // keep the default
    if (!value.IsScalar()) fail(key, type_name<T>(), value);
    try {
      out = value.as<T>();
    } catch (const YAML::Exception&) {
      fail(key, type_name<T>(), value);
    }
  }

  YAML::Node child(const std::string& key) {
    known_.push_back(key);
    return node_ ? node_[key] : YAML::Node();
  }

  std::string path(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }

  // Every key present must have been read.
  void reject_unknown() const {
    if (!node_) return;
    for (const auto& entry : node_) {
      const auto key = entry.first.as<std::string>();
      if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
        fail_input("{}: unknown key '{}'; valid keys here: {}", source_, path(key), fmt::join(known_, ", "));
      }
    }
  }

  [[noreturn]] void fail(const std::string& key, const std::string& expected, const YAML::Node& got) const {
    std::ostringstream text;
    text << got;
    fail_input("{}: key '{}': expected {}, got '{}'", source_, path(key), expected, text.str());
  }

  const std::string& source() const { return source_; }

 private:
  template <typename T>
  static std::string type_name() {
    if constexpr (std::is_same_v<T, bool>) return "true or false";
    else if constexpr (std::is_unsigned_v<T>) return "a non-negative integer";
    else if constexpr (std::is_integral_v<T>) return "an integer";
    else if constexpr (std::is_floating_point_v<T>) return "a number";
    else return "a string";
  }

  YAML::Node node_;
  std::string source_;
  std::string prefix_;
  std::vector<std::string> known_;
};

void require(bool ok, const std::string& source, const std::string& key, const std::string& expected,
             const std::string& got) {
  if (!ok) fail_input("{}: key '{}': expected {}, got {}", source, key, expected, got);
}

void require_one_of(const std::string& source, const std::string& key, const std::string& value,
                    const std::vector<std::string>& choices) {
  if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
    fail_input("{}: key '{}': '{}' is not one of {}", source, key, value, fmt::join(choices, ", "));
  }
}

// "a.b.c=value": sets node[a][b][c] to the YAML scalar `value` (typed as YAML would type it).
void apply_override(YAML::Node& root, const std::string& assignment) {
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0) {
    fail_input("--set '{}': expected key=value, e.g. --set optimizer.lr=0.1", assignment);
  }
  const std::string key = assignment.substr(0, equals);
  const std::string value = assignment.substr(equals + 1);
  std::vector<std::string> parts;
  std::stringstream stream(key);
  for (std::string part; std::getline(stream, part, '.');) parts.push_back(part);
  // yaml-cpp's operator[] on a non-const node creates the key; walk with fresh handles so the
  // assignment below rebinds nothing it should not.
  std::vector<YAML::Node> chain{root};
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = chain.back()[parts[i]];
    if (next && !next.IsMap() && !next.IsNull()) {
      fail_input("--set '{}': '{}' is not a section", assignment, parts[i]);
    }
    chain.push_back(next);
  }
  chain.back()[parts.back()] = YAML::Load(value.empty() ? "''" : value);
}

// ps.servers: "host:port,host:port" or a YAML list of host:port; every entry must have a port.
void read_server_list(const YAML::Node& node, const std::string& source, std::vector<std::string>& servers) {
  if (!node || node.IsNull()) return;
  std::vector<std::string> entries;
  if (node.IsSequence()) {
    for (const auto& item : node) entries.push_back(item.as<std::string>());
  } else if (node.IsScalar()) {
    std::stringstream stream(node.as<std::string>());
    for (std::string entry; std::getline(stream, entry, ',');) entries.push_back(entry);
  } else {
    fail_input("{}: key 'ps.servers': expected host:port[,host:port...] or a list of them", source);
  }
  servers.clear();
  for (std::string entry : entries) {
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (entry.empty()) continue;
    const auto colon = entry.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == entry.size() ||
        entry.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
      fail_input("{}: key 'ps.servers': '{}' is not host:port (e.g. 10.0.0.5:50051)", source, entry);
    }
    servers.push_back(entry);
  }
}

// yaml-cpp keeps both entries of a key written twice and lookups see only one of them, so a
// blueprint that sets a key twice would run with one value and save both lines: refused instead.
void reject_duplicate_keys(const YAML::Node& node, const std::string& source, const std::string& prefix) {
  if (node.IsSequence()) {
    for (const auto& item : node) reject_duplicate_keys(item, source, prefix);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, int> first_line;  // key -> its line, from 1
  for (const auto& entry : node) {
    const auto key = entry.first.as<std::string>();
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    const int line = entry.first.Mark().line + 1;
    const auto [found, fresh] = first_line.emplace(key, line);
    if (!fresh) {
      fail_input("{}: key '{}' is set twice, on lines {} and {}; keep one of them", source, path, found->second,
                 line);
    }
    reject_duplicate_keys(entry.second, source, path);
  }
}

// Nothing but blanks and comments (a YAML null); invalid YAML is parse_blueprint's to report.
bool holds_nothing(const std::string& text) {
  try {
    const YAML::Node root = YAML::Load(text);
    return !root || root.IsNull();
  } catch (const YAML::Exception&) {
    return false;
  }
}

}  // namespace

std::string_view default_blueprint_text() { return kDefaultBlueprint; }

namespace {

// The blueprint's YAML with the overrides applied, checked for a mapping and keys set twice.
std::string scalar_or_empty(const YAML::Node& node) { return node && node.IsScalar() ? node.Scalar() : ""; }

// The run is named after the blueprint, whose name usually says its model ("lenet5-fashion-mnist"):
// a model overridden (and the name not) renames the run, so its directory does not claim the
// model it was not — the old model's name replaced by the new, or the new one appended.
void follow_model_override(YAML::Node& root, const std::string& model, const std::string& name) {
  const std::string new_model = scalar_or_empty(root["model"]);
  if (name.empty() || new_model.empty() || new_model == model || scalar_or_empty(root["name"]) != name) return;
  const size_t at = model.empty() ? std::string::npos : name.find(model);
  root["name"] = at == std::string::npos ? name + "-" + new_model
                                         : name.substr(0, at) + new_model + name.substr(at + model.size());
}

YAML::Node blueprint_root(const std::string& text, const std::string& source, const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    fail_input("{}: not valid YAML: {}", source, error.what());
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) fail_input("{}: expected a mapping of keys at the top", source);
  reject_duplicate_keys(root, source, "");
  const std::string model = scalar_or_empty(root["model"]), name = scalar_or_empty(root["name"]);
  for (const auto& assignment : overrides) apply_override(root, assignment);
  follow_model_override(root, model, name);
  return root;
}

// dataset: and optimizer:.
void read_data_and_optimizer(Section& top, const std::string& source, Blueprint& bp) {
  Section data(top.child("dataset"), source, "dataset");
  data.read("format", bp.data.format);
  data.read("path", bp.data.path);
  data.read("cache", bp.data.cache);
  data.read("augment", bp.data.augment);
  data.read("resize", bp.data.resize);
  data.reject_unknown();

  Section optimizer(top.child("optimizer"), source, "optimizer");
  optimizer.read("name", bp.optimizer.name);
  optimizer.read("lr", bp.optimizer.learning_rate);
  optimizer.read("momentum", bp.optimizer.momentum);
  optimizer.read("weight_decay", bp.optimizer.weight_decay);
  optimizer.read("nesterov", bp.optimizer.nesterov);
  optimizer.read("beta1", bp.optimizer.beta1);
  optimizer.read("beta2", bp.optimizer.beta2);
  optimizer.read("epsilon", bp.optimizer.epsilon);
  optimizer.reject_unknown();

}

// comm:, ps:, straggler:, profile:, eval:, pytorch: and save_weights.
void read_comm_and_servers(Section& top, const std::string& source, Blueprint& bp) {
  Section comm(top.child("comm"), source, "comm");
  comm.read("bucket_mb", bp.comm.bucket_mb);
  comm.read("overlap", bp.comm.overlap);
  comm.read("chunk_kb", bp.comm.chunk_kb);
  comm.read("ring_path", bp.comm.ring_path);
  comm.read("timeout_s", bp.comm.timeout_s);
  comm.read("iface", bp.comm.iface);
  comm.reject_unknown();

  Section ps(top.child("ps"), source, "ps");
  read_server_list(ps.child("servers"), source, bp.ps.servers);
  ps.read("placement", bp.ps.placement);
  ps.read("key_kb", bp.ps.key_kb);
  ps.read("timeout_s", bp.ps.timeout_s);
  ps.read("retries", bp.ps.retries);
  ps.read("max_staleness", bp.ps.max_staleness);
  ps.read("checkpoint_every", bp.ps.checkpoint_every);
  ps.read("run_id", bp.ps.run_id);
  ps.read("auth_token_file", bp.ps.auth_token_file);
  ps.read("tls_ca", bp.ps.tls_ca);
  ps.read("tls_cert", bp.ps.tls_cert);
  ps.read("tls_key", bp.ps.tls_key);
  ps.reject_unknown();
  Section straggler(top.child("straggler"), source, "straggler");
  straggler.read("rank", bp.straggler.rank);
  straggler.read("delay_ms", bp.straggler.delay_ms);
  straggler.reject_unknown();
  top.read("save_weights", bp.save_weights);
  Section profile(top.child("profile"), source, "profile");
  profile.read("operators", bp.time_operators);
  profile.read("device_marks", bp.device_marks);
  profile.read("trace_steps", bp.trace_steps);
  profile.reject_unknown();
  Section eval(top.child("eval"), source, "eval");
  eval.read("max_samples", bp.eval_max_samples);
  eval.reject_unknown();
  Section pytorch(top.child("pytorch"), source, "pytorch");
  pytorch.read("profile", bp.pytorch.profile);
  pytorch.read("ddp_hook", bp.pytorch.ddp_hook);
  pytorch.reject_unknown();

}

// Every number within its range.
void check_ranges(const Blueprint& bp, const std::string& source) {
  require(bp.epochs >= 1, source, "epochs", "an integer >= 1", std::to_string(bp.epochs));
  require(bp.steps >= 0, source, "steps", "an integer >= 0 (0: whole epochs)", std::to_string(bp.steps));
  require(bp.batch >= 1, source, "batch", "an integer >= 1", std::to_string(bp.batch));
  require(bp.trace_steps >= 0, source, "profile.trace_steps", "an integer >= 0 (0: no trace)",
          std::to_string(bp.trace_steps));
  require(bp.eval_max_samples >= 0, source, "eval.max_samples", "an integer >= 0 (0: the whole test set)",
          std::to_string(bp.eval_max_samples));
  require(bp.threads >= 0, source, "threads", "an integer >= 0 (0: one per core)", std::to_string(bp.threads));
  require(bp.data.resize >= 0, source, "dataset.resize", "an integer >= 0", std::to_string(bp.data.resize));
  require(!bp.name.empty(), source, "name", "a non-empty string", "''");
  require(bp.comm.bucket_mb >= 0, source, "comm.bucket_mb", "a number >= 0 (0: one fused buffer)",
          fmt::format("{}", bp.comm.bucket_mb));
  require(bp.comm.chunk_kb >= 0, source, "comm.chunk_kb",
          "an integer >= 0 (0: the largest eager message over TCP, 1 MiB in shared memory)",
          std::to_string(bp.comm.chunk_kb));
  require(bp.comm.timeout_s > 0, source, "comm.timeout_s", "a number > 0", fmt::format("{}", bp.comm.timeout_s));
  require(bp.straggler.rank >= -1, source, "straggler.rank", "a worker rank, or -1 for none",
          std::to_string(bp.straggler.rank));
  require(bp.straggler.delay_ms >= 0, source, "straggler.delay_ms", "a number of milliseconds >= 0",
          fmt::format("{}", bp.straggler.delay_ms));
  require_one_of(source, "comm.ring_path", bp.comm.ring_path, {"auto", "shm", "messages"});
  require_one_of(source, "engine", bp.engine, {"dtbench", "pytorch"});
  require_one_of(source, "pytorch.profile", bp.pytorch.profile, {"matched", "defaults"});
  require_one_of(source, "pytorch.ddp_hook", bp.pytorch.ddp_hook, {"timed", "builtin"});
  if (bp.engine == "pytorch") {
    if (bp.transport != kLocalTransport && bp.transport != "ddp") {
      auto exchanging = transport_names_where([](const TransportRow& row) { return row.family != TransportFamily::Local; });
      const std::string last = exchanging.back();
      exchanging.pop_back();
      fail_input("{}: key 'transport': '{}' is not one the pytorch engine has: {}, ddp (DistributedDataParallel "
                 "over gloo); {} and {} are dtbench's (engine: dtbench)",
                 source, bp.transport, kLocalTransport, fmt::join(exchanging, ", "), last);
    }
    if (bp.device != "cpu") fail_input("{}: key 'device': the pytorch engine runs on the cpu only", source);
  } else {
    if (bp.transport == "ddp") {
      fail_input("{}: key 'transport': 'ddp' is the pytorch engine's (set engine: pytorch); dtbench's are {}", source,
                 fmt::join(transport_names(), ", "));
    }
    require_one_of(source, "transport", bp.transport, transport_names());
  }
  require_one_of(source, "device", bp.device, known_devices());
  require_one_of(source, "precision", bp.precision, known_precisions());
  require_one_of(source, "conv_algorithms", bp.conv_algorithms, {"measured", "rules"});
  if (bp.device == "cpu") check_host_precision(parse_precision(bp.precision, "precision"), source + ": key 'precision'");
  require_one_of(source, "ps.placement", bp.ps.placement, {"balanced", "hash"});
  require(bp.ps.key_kb >= 1, source, "ps.key_kb", "an integer >= 1", std::to_string(bp.ps.key_kb));
  require(bp.ps.timeout_s > 0, source, "ps.timeout_s", "a number > 0", fmt::format("{}", bp.ps.timeout_s));
  require(bp.ps.retries >= 0, source, "ps.retries", "an integer >= 0", std::to_string(bp.ps.retries));
  require(bp.ps.max_staleness >= 0, source, "ps.max_staleness", "an integer >= 0 (0: unbounded)",
          std::to_string(bp.ps.max_staleness));
  require(bp.ps.checkpoint_every >= 0, source, "ps.checkpoint_every", "an integer >= 0 (0: at shutdown only)",
          std::to_string(bp.ps.checkpoint_every));
  require(bp.ps.tls_cert.empty() == bp.ps.tls_key.empty(), source, "ps.tls_cert", "ps.tls_cert and ps.tls_key together",
          bp.ps.tls_cert.empty() ? "only ps.tls_key" : "only ps.tls_cert");
}

// Every name one of those there are, and what a transport needs.
void check_choices(Blueprint& bp, const std::string& source) {
  const TransportRow* row = find_transport_row(bp.transport);  // null: the pytorch engine's ddp
  if (row != nullptr && row->needs_servers() && bp.ps.servers.empty()) {
    fail_input("{}: transport {} needs parameter servers: set ps.servers (e.g. --set ps.servers=host:50051,host:50052)",
               source, bp.transport);
  }
  if (bp.ps.run_id.empty()) bp.ps.run_id = bp.name;
  std::vector<std::string> model_names;
  for (const auto& entry : models::catalogue()) model_names.push_back(entry.name);
  require_one_of(source, "model", bp.model, model_names);
  require_one_of(source, "dataset.format", bp.data.format, {"idx", "cifar10", "cifar100"});
  require_one_of(source, "optimizer.name", bp.optimizer.name, {"sgd", "adam"});
  require(bp.optimizer.learning_rate > 0, source, "optimizer.lr", "a number > 0",
          fmt::format("{}", bp.optimizer.learning_rate));
  require(bp.optimizer.momentum >= 0 && bp.optimizer.momentum < 1, source, "optimizer.momentum",
          "a number in [0, 1)", fmt::format("{}", bp.optimizer.momentum));
}

}  // namespace

Blueprint parse_blueprint(const std::string& text, const std::string& source,
                          const std::vector<std::string>& overrides) {
  YAML::Node root = blueprint_root(text, source, overrides);
  Blueprint bp;
  bp.source = source;
  Section top(root, source, "");
  top.read("name", bp.name);
  top.read("model", bp.model);
  top.read("epochs", bp.epochs);
  top.read("steps", bp.steps);
  top.read("batch", bp.batch);
  top.read("seed", bp.seed);
  top.read("threads", bp.threads);
  top.read("transport", bp.transport);
  top.read("engine", bp.engine);
  top.read("device", bp.device);
  top.read("precision", bp.precision);
  top.read("conv_algorithms", bp.conv_algorithms);
  top.read("output", bp.output);

  read_data_and_optimizer(top, source, bp);
  read_comm_and_servers(top, source, bp);
  top.reject_unknown();
  check_ranges(bp, source);
  check_choices(bp, source);
  bp.resolved = root;
  return bp;
}

Blueprint load_blueprint(const std::string& path, const std::vector<std::string>& overrides) {
  const std::optional<std::string> text = read_file(path);
  if (!text) fail_input("blueprint {}: cannot open it (does the file exist?)", path);
  // An empty file is more likely a mistake (a truncated copy, the wrong path) than a wish for every
  // default; the built-in blueprint is what no --config gives.
  if (holds_nothing(*text)) {
    fail_input("blueprint {}: the file holds no keys; expected a mapping of keys (e.g. model: lenet5), or leave out "
               "--config for the built-in blueprint",
               path);
  }
  return parse_blueprint(*text, path, overrides);
}

}  // namespace dtbench

namespace dtbench {

nlohmann::json blueprint_json(const YAML::Node& node) {
  if (!node || node.IsNull()) return nullptr;
  if (node.IsMap()) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& entry : node) object[entry.first.as<std::string>()] = blueprint_json(entry.second);
    return object;
  }
  if (node.IsSequence()) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& item : node) array.push_back(blueprint_json(item));
    return array;
  }
  int64_t integer = 0;
  double number = 0.0;
  bool flag = false;
  if (YAML::convert<int64_t>::decode(node, integer)) return integer;
  if (YAML::convert<double>::decode(node, number)) return number;
  if (YAML::convert<bool>::decode(node, flag)) return flag;
  return node.as<std::string>();
}

}  // namespace dtbench
