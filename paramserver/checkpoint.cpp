#include "paramserver/checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "core/util/hash.h"

namespace dtbench {

namespace {

constexpr char kMagic[8] = {'D', 'T', 'B', 'P', 'S', 'C', 'K', '2'};
constexpr int kFormat = 2;
constexpr uint64_t kMaxHeaderBytes = 64u << 20;
constexpr int64_t kMaxShards = 1 << 16;
// Magic, header length, checksum: the bytes of a checkpoint that are neither header nor payload.
constexpr uint64_t kFramingBytes = sizeof(kMagic) + 2 * sizeof(uint64_t);

uint64_t checksum(const std::string& header_text, const ShardState& state) {
  return fnv1a(state.optimizer_state, fnv1a(state.values, fnv1a(header_text)));
}

void write_all(FILE* file, const void* data, size_t bytes, const std::string& path) {
  if (bytes > 0 && std::fwrite(data, 1, bytes, file) != bytes) {
    throw IoError(fmt::format("checkpoint {}: write failed: {}", path, std::strerror(errno)));
  }
}

void read_all(std::ifstream& in, void* data, size_t bytes, const std::string& path) {
  if (bytes > 0 && !in.read(static_cast<char*>(data), static_cast<std::streamsize>(bytes))) {
    fail_input("checkpoint {}: truncated (expected {} more bytes)", path, bytes);
  }
}

// The header's fields, each checked against its range before anything trusts it.
class HeaderFields {
 public:
  HeaderFields(const nlohmann::json& meta, std::string path) : meta_(meta), path_(std::move(path)) {}

  int64_t integer(const std::string& field, int64_t low, int64_t high, const std::string& expected) const {
    const nlohmann::json& value = at(field);
    const bool in_range = (value.is_number_integer() && !value.is_number_unsigned() &&
                           value.get<int64_t>() >= low && value.get<int64_t>() <= high) ||
                          (value.is_number_unsigned() && value.get<uint64_t>() <= static_cast<uint64_t>(high) &&
                           static_cast<int64_t>(value.get<uint64_t>()) >= low);
    if (!in_range) refuse(field, value, expected);
    return value.get<int64_t>();
  }
  std::string text(const std::string& field, size_t max_length) const {
    const nlohmann::json& value = at(field);
    if (!value.is_string() || value.get<std::string>().size() > max_length) {
      refuse(field, value, fmt::format("a string of at most {} characters", max_length));
    }
    return value.get<std::string>();
  }
  const nlohmann::json& at(const std::string& field) const {
    const nlohmann::json::json_pointer pointer(fmt::format("/{}", replace_dots(field)));
    if (!meta_.contains(pointer)) fail_input("checkpoint {}: the header has no field '{}'", path_, field);
    return meta_.at(pointer);
  }
  [[noreturn]] void refuse(const std::string& field, const nlohmann::json& value, const std::string& expected) const {
    std::string shown = value.dump();
    if (shown.size() > 64) shown = shown.substr(0, 64) + "…";
    fail_input("checkpoint {}: header field '{}' is {}; expected {}", path_, field, shown, expected);
  }

 private:
  static std::string replace_dots(std::string field) {
    std::replace(field.begin(), field.end(), '.', '/');
    return field;
  }
  const nlohmann::json& meta_;
  std::string path_;
};

std::vector<std::pair<int64_t, int64_t>> read_keys(const HeaderFields& fields, int64_t value_count) {
  const nlohmann::json& keys = fields.at("keys");
  const std::string expected = fmt::format("[[key id, float count], ...] in increasing key order, the counts >= 1 "
                                           "and summing to value_count ({})",
                                           value_count);
  if (!keys.is_array() || static_cast<int64_t>(keys.size()) > value_count) fields.refuse("keys", keys, expected);
  std::vector<std::pair<int64_t, int64_t>> list;
  int64_t total = 0;
  for (const nlohmann::json& key : keys) {
    const bool pair = key.is_array() && key.size() == 2 && key[0].is_number_integer() && key[1].is_number_integer();
    if (!pair) fields.refuse("keys", key, expected);
    const int64_t id = key[0].get<int64_t>(), count = key[1].get<int64_t>();
    const bool ordered = id >= 0 && (list.empty() || id > list.back().first);
    if (!ordered || count < 1 || count > value_count - total) fields.refuse("keys", key, expected);
    total += count;
    list.emplace_back(id, count);
  }
  if (total != value_count) fields.refuse("keys", keys, expected);
  return list;
}

// The header, checked field by field; `state` gets its sizes (payload_floats: the floats the file
// holds after the header, which bound every count before anything is allocated).
CheckpointHeader read_header(const nlohmann::json& meta, const std::string& path, uint64_t payload_floats,
                             ShardState& state) {
  const HeaderFields fields(meta, path);
  const int64_t format = fields.integer("format", 0, 1000, std::to_string(kFormat));
  if (format != kFormat) {
    fail_input("checkpoint {}: format {} (this dtbench reads format {}; format 1's checksum did not cover its "
               "header, so it is not trusted)",
               path, format, kFormat);
  }
  CheckpointHeader header;
  header.shard_count = static_cast<int>(fields.integer("shard_count", 1, kMaxShards, fmt::format("1 .. {}", kMaxShards)));
  header.shard = static_cast<int>(
      fields.integer("shard", 0, header.shard_count - 1, fmt::format("0 .. shard_count - 1 ({})", header.shard_count - 1)));
  const std::string mode = fields.text("mode", 8);
  if (mode != "sync" && mode != "async") fields.refuse("mode", fields.at("mode"), "\"sync\" or \"async\"");
  header.mode = parse_mode(mode);
  state.version = fields.integer("version", 0, kMaxCheckpointVersion, fmt::format("0 .. {}", kMaxCheckpointVersion));
  state.optimizer_name = fields.text("optimizer.name", 64);
  state.optimizer_steps =
      fields.integer("optimizer.steps", 0, state.version, fmt::format("0 .. version ({})", state.version));
  const auto floats = static_cast<int64_t>(payload_floats);
  const std::string room = fmt::format("0 .. {} (the floats the file holds after its header)", floats);
  const int64_t values = fields.integer("value_count", 0, floats, room);
  const int64_t optimizer = fields.integer("optimizer.state_count", 0, floats - values,
                                           fmt::format("{} (the file's {} floats less value_count)", floats - values, floats));
  if (values + optimizer != floats) {
    fail_input("checkpoint {}: holds {} floats after its header but value_count + optimizer.state_count say {} "
               "(truncated or corrupt)",
               path, floats, values + optimizer);
  }
  header.keys = read_keys(fields, values);
  state.values.resize(static_cast<size_t>(values));
  state.optimizer_state.resize(static_cast<size_t>(optimizer));
  return header;
}

}  // namespace

void write_checkpoint(const std::string& path, const CheckpointHeader& header, const ShardState& state) {
  const nlohmann::json meta = {{"format", kFormat},
                               {"shard", header.shard},
                               {"shard_count", header.shard_count},
                               {"mode", mode_name(header.mode)},
                               {"version", state.version},
                               {"keys", header.keys},
                               {"value_count", state.values.size()},
                               {"optimizer",
                                {{"name", state.optimizer_name},
                                 {"steps", state.optimizer_steps},
                                 {"state_count", state.optimizer_state.size()}}}};
  const std::string text = meta.dump();
  const uint64_t header_bytes = text.size();
  const uint64_t sum = checksum(text, state);
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string temporary = fmt::format("{}.tmp-{}", path, getpid());
  FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) throw IoError(fmt::format("checkpoint {}: cannot create it: {}", temporary, std::strerror(errno)));
  try {
    write_all(file, kMagic, sizeof(kMagic), temporary);
    write_all(file, &header_bytes, sizeof(header_bytes), temporary);
    write_all(file, text.data(), text.size(), temporary);
    write_all(file, state.values.data(), state.values.size() * sizeof(float), temporary);
    write_all(file, state.optimizer_state.data(), state.optimizer_state.size() * sizeof(float), temporary);
    write_all(file, &sum, sizeof(sum), temporary);
    if (std::fflush(file) != 0 || fsync(fileno(file)) != 0) {
      throw IoError(fmt::format("checkpoint {}: flush failed: {}", temporary, std::strerror(errno)));
    }
  } catch (...) {
    std::fclose(file);
    std::remove(temporary.c_str());
    throw;
  }
  std::fclose(file);
  std::filesystem::rename(temporary, target);
}

std::pair<CheckpointHeader, ShardState> read_checkpoint(const std::string& path) {
  std::error_code error;
  const uint64_t file_bytes = std::filesystem::file_size(path, error);
  std::ifstream in(path, std::ios::binary);
  if (error || !in) fail_input("checkpoint {}: cannot open it (does the file exist?)", path);
  char magic[sizeof(kMagic)] = {};
  uint64_t header_bytes = 0;
  read_all(in, magic, sizeof(magic), path);
  if (std::memcmp(magic, kMagic, sizeof(kMagic) - 1) != 0) fail_input("checkpoint {}: not a dtbench checkpoint", path);
  read_all(in, &header_bytes, sizeof(header_bytes), path);
  if (header_bytes > kMaxHeaderBytes || header_bytes + kFramingBytes > file_bytes) {
    fail_input("checkpoint {}: corrupt header size {} (the file has {} bytes)", path, header_bytes, file_bytes);
  }
  std::string text(header_bytes, '\0');
  read_all(in, text.data(), text.size(), path);
  const uint64_t payload_bytes = file_bytes - kFramingBytes - header_bytes;
  if (payload_bytes % sizeof(float) != 0) fail_input("checkpoint {}: the payload is not whole floats (corrupt)", path);

  ShardState state;
  CheckpointHeader header;
  try {
    header = read_header(nlohmann::json::parse(text), path, payload_bytes / sizeof(float), state);
  } catch (const nlohmann::json::exception& problem) {
    fail_input("checkpoint {}: corrupt header: {}", path, problem.what());
  }
  uint64_t expected = 0;
  read_all(in, state.values.data(), state.values.size() * sizeof(float), path);
  read_all(in, state.optimizer_state.data(), state.optimizer_state.size() * sizeof(float), path);
  read_all(in, &expected, sizeof(expected), path);
  if (checksum(text, state) != expected) fail_input("checkpoint {}: checksum mismatch (corrupt or edited file)", path);
  return {std::move(header), std::move(state)};
}

std::unique_ptr<Optimizer> restore_optimizer(const OptimizerConfig& config, const ShardState& state) {
  auto optimizer = make_optimizer(config, static_cast<int64_t>(state.values.size()));
  if (state.optimizer_name.empty()) return optimizer;  // a fresh start
  if (state.optimizer_name != optimizer->name()) {
    fail_input("the checkpoint was written with optimizer {} but the blueprint asks for {}", state.optimizer_name,
               optimizer->name());
  }
  if (optimizer->state().size() != state.optimizer_state.size()) {
    fail_input("the checkpoint's optimizer state has {} floats, the blueprint's {} needs {} (momentum changed?)",
               state.optimizer_state.size(), optimizer->name(), optimizer->state().size());
  }
  optimizer->restore(state.optimizer_state, state.optimizer_steps);
  return optimizer;
}

}  // namespace dtbench
