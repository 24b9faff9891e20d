#include "paramserver/checkpoint.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "core/util/hash.h"

namespace dtbench {

namespace {

constexpr char kMagic[8] = {'D', 'T', 'B', 'P', 'S', 'C', 'K', '1'};

uint64_t payload_hash(const ShardState& state) {
  return fnv1a(state.optimizer_state, fnv1a(state.values));
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

}  // namespace

void write_checkpoint(const std::string& path, const CheckpointHeader& header, const ShardState& state) {
  nlohmann::json meta = {{"format", 1},
                         {"shard", header.shard},
                         {"shard_count", header.shard_count},
                         {"mode", mode_name(header.mode)},
                         {"version", state.version},
                         {"keys", header.keys},
                         {"value_count", state.values.size()},
                         {"optimizer",
                          {{"name", state.optimizer_name},
                           {"steps", state.optimizer_steps},
                           {"state_count", state.optimizer_state.size()}}},
                         {"payload_fnv1a", payload_hash(state)}};
  const std::string text = meta.dump();
  const uint64_t header_bytes = text.size();
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
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_input("checkpoint {}: cannot open it (does the file exist?)", path);
  char magic[sizeof(kMagic)] = {};
  uint64_t header_bytes = 0;
  read_all(in, magic, sizeof(magic), path);
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) fail_input("checkpoint {}: not a dtbench checkpoint", path);
  read_all(in, &header_bytes, sizeof(header_bytes), path);
  if (header_bytes > (64u << 20)) fail_input("checkpoint {}: corrupt header size {}", path, header_bytes);
  std::string text(header_bytes, '\0');
  read_all(in, text.data(), text.size(), path);

  CheckpointHeader header;
  ShardState state;
  uint64_t expected_hash = 0;
  try {
    const nlohmann::json meta = nlohmann::json::parse(text);
    if (meta.at("format").get<int>() != 1) fail_input("checkpoint {}: unknown format {}", path, meta.at("format").dump());
    header.shard = meta.at("shard").get<int>();
    header.shard_count = meta.at("shard_count").get<int>();
    header.mode = parse_mode(meta.at("mode").get<std::string>());
    header.keys = meta.at("keys").get<std::vector<std::pair<int64_t, int64_t>>>();
    state.version = meta.at("version").get<int64_t>();
    state.values.resize(meta.at("value_count").get<size_t>());
    state.optimizer_name = meta.at("optimizer").at("name").get<std::string>();
    state.optimizer_steps = meta.at("optimizer").at("steps").get<int64_t>();
    state.optimizer_state.resize(meta.at("optimizer").at("state_count").get<size_t>());
    expected_hash = meta.at("payload_fnv1a").get<uint64_t>();
  } catch (const nlohmann::json::exception& error) {
    fail_input("checkpoint {}: corrupt header: {}", path, error.what());
  }
  read_all(in, state.values.data(), state.values.size() * sizeof(float), path);
  read_all(in, state.optimizer_state.data(), state.optimizer_state.size() * sizeof(float), path);
  if (in.peek() != std::char_traits<char>::eof()) fail_input("checkpoint {}: trailing bytes after the payload", path);
  if (payload_hash(state) != expected_hash) fail_input("checkpoint {}: payload checksum mismatch (corrupt file)", path);
  return {std::move(header), std::move(state)};
}

std::unique_ptr<Optimizer> restore_optimizer(const OptimizerConfig& config, const ShardState& state) {
  auto optimizer = make_optimizer(config, static_cast<int64_t>(state.values.size()));
  if (state.optimizer_name.empty()) return optimizer;  // a fresh start
  if (state.optimizer_name != optimizer->name()) {
    fail_input("the checkpoint was written with optimizer {} but the blueprint asks for {}", state.optimizer_name,
               optimizer->name());
  }
  const std::span<const float> own = optimizer->state();
  if (own.size() != state.optimizer_state.size()) {
    fail_input("the checkpoint's optimizer state has {} floats, the blueprint's {} needs {} (momentum changed?)",
               state.optimizer_state.size(), optimizer->name(), own.size());
  }
  // core's Optimizer has no setter for its state yet: state() views the optimizer's own storage,
  // and a step over zero elements advances only the step count. Both are checked by the
  // checkpoint tests (a restored shard continues bit-identically).
  std::copy(state.optimizer_state.begin(), state.optimizer_state.end(), const_cast<float*>(own.data()));
  for (int64_t step = 0; step < state.optimizer_steps; ++step) optimizer->step({}, {});
  return optimizer;
}

}  // namespace dtbench
