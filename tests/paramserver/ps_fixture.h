#pragma once
// Shared pieces of the parameter-server tests: a small model (the MLP, 109,386 parameters), fixed
// random batches, servers started in-process on free loopback ports, workers as threads.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/layers/loss.h"
#include "core/models/models.h"
#include "core/util/blas.h"
#include "core/util/rng.h"
#include "core/tensor/param_arena.h"
#include "core/util/error.h"
#include "paramserver/parameter_server.h"
#include "paramserver/ps_connection.h"
#include "paramserver/ps_transport.h"

namespace dtbench::pstest {

constexpr uint64_t kSeed = 7;
// Timeouts in the tests stretch under ThreadSanitizer, which slows everything several times.
#if defined(__SANITIZE_THREAD__)
constexpr double kTimeScale = 5.0;
#else
constexpr double kTimeScale = 1.0;
#endif
constexpr int64_t kKeyFloats = 4096;  // fc1.weight (100,352 floats) becomes 25 keys

inline std::unique_ptr<Model> small_model(uint64_t seed = kSeed) {
  auto model = models::build("mlp", {1, 28, 28}, 10);
  model->initialize(seed);
  return model;
}

struct Batch {
  Tensor images;
  std::vector<int32_t> labels;
};

// A fixed batch: images N(0, 1), labels from a fixed linear rule on the images (so the problem is
// learnable and the loss can fall).
inline Batch make_batch(uint64_t seed, int64_t size) {
  Batch batch{Tensor({size, 1, 28, 28}), {}};
  Rng rng(seed);
  for (float& x : batch.images.span()) x = rng.normal();
  for (int64_t b = 0; b < size; ++b) {
    const float* image = batch.images.data() + b * 784;
    float score = 0.0f;
    for (int i = 0; i < 784; i += 7) score += image[i];
    batch.labels.push_back(static_cast<int32_t>(std::clamp(static_cast<int>(score * 0.5f + 5.0f), 0, 9)));
  }
  return batch;
}

// Forward, loss, backward: the arena's gradients are the batch's. Returns the loss.
inline double compute_gradients(Model& model, const Batch& batch) {
  Tensor grad_logits;
  const Tensor& logits = model.forward(batch.images, Mode::Train);
  const LossResult loss = softmax_cross_entropy(logits, batch.labels, &grad_logits);
  model.backward(grad_logits);
  return loss.loss;
}

inline OptimizerConfig sgd_momentum() {
  return {.name = "sgd", .learning_rate = 0.05f, .momentum = 0.9f, .weight_decay = 1e-4f};
}

inline OptimizerConfig adam() { return {.name = "adam", .learning_rate = 1e-3f}; }

// One parameter of `floats` floats on one in-process sync server for one worker, SGD at rate 1
// (values fall by the gradient), and the connection options that reach it.
struct OnePayloadServer {
  Param payload;
  ParamArena arena;
  std::unique_ptr<ParameterServer> server;

  explicit OnePayloadServer(int64_t floats) : payload{.name = "payload", .shape = {floats}} {
    arena.bind({&payload});
    ParameterServerOptions o;
    o.run_id = "test-run";
    o.worker_count = 1;
    o.checkpoints = false;
    server = std::make_unique<ParameterServer>(arena, OptimizerConfig{.name = "sgd", .learning_rate = 1.0f}, o);
  }
  ConnectionOptions connection() const {
    ConnectionOptions options;
    options.address = server->address();
    options.security.auth_token = server->auth_token();
    return options;
  }
};

// What a sync server must average in a step, computed apart: two workers' gradients summed in
// worker order from zero, then halved.
inline std::vector<float> two_worker_average(int64_t floats, const std::function<float(int, int64_t)>& gradient) {
  std::vector<float> average(static_cast<size_t>(floats));
  for (int64_t i = 0; i < floats; ++i) {
    float sum = 0.0f;
    sum += gradient(0, i);
    sum += gradient(1, i);
    average[static_cast<size_t>(i)] = sum * 0.5f;
  }
  return average;
}

// A push-pull for version 3 of a server at version 0 must be refused with INVALID_ARGUMENT naming
// the version, and write no values.
inline void expect_version_3_refused(PsConnection& line, const KeyIndex& index, std::vector<float>& values) {
  const std::vector<float> before = values;
  const std::vector<float> grads(values.size(), 1.0f);
  try {
    line.push_pull(0, 3, index, grads.data(), values.data());
    ADD_FAILURE() << "a push-pull at version 3 of a server at version 0 was accepted";
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find("INVALID_ARGUMENT"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("version 3"), std::string::npos) << error.what();
  }
  EXPECT_EQ(values, before);
}

struct ServerSet {
  std::vector<std::unique_ptr<ParameterServer>> servers;

  std::vector<std::string> addresses() const {
    std::vector<std::string> list;
    for (const auto& server : servers) list.push_back(server->address());
    return list;
  }
  ParameterServer& operator[](size_t shard) { return *servers.at(shard); }
};

// `shards` servers of the small model, each built from the same seed as the workers, sharing one
// fresh auth token (an `adjust` may make them insecure instead).
inline ServerSet start_servers(int shards, int workers, PsMode mode, OptimizerConfig optimizer,
                               const std::function<void(ParameterServerOptions&)>& adjust = {}) {
  ServerSet set;
  const std::string token = generate_token();
  for (int shard = 0; shard < shards; ++shard) {
    auto model = small_model();
    ParameterServerOptions options;
    options.shard = shard;
    options.worker_count = workers;
    options.mode = mode;
    options.run_id = "test-run";
    options.timeout_seconds = 10.0 * kTimeScale;
    options.placement = {shards, kKeyFloats, PlacementPolicy::Balanced};
    options.security.auth_token = token;
    if (adjust) adjust(options);
    set.servers.push_back(std::make_unique<ParameterServer>(model->arena(), optimizer, options));
  }
  return set;
}

inline PsTransportOptions transport_options(const ServerSet& set, PsMode mode, int rank, int world) {
  PsTransportOptions options;
  options.servers = set.addresses();
  options.mode = mode;
  options.rank = rank;
  options.world = world;
  options.run_id = "test-run";
  options.key_float_count = kKeyFloats;
  options.timeout_seconds = 10.0 * kTimeScale;
  options.retries = 2;
  options.backoff_seconds = 0.05;
  options.security.auth_token = set.servers.at(0)->auth_token();
  return options;
}

// Runs fn(rank) on `world` threads; rethrows nothing, returns each thread's error text ("" if none).
inline std::vector<std::string> run_workers(int world, const std::function<void(int)>& fn) {
  std::vector<std::string> errors(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        fn(rank);
      } catch (const std::exception& error) {
        errors[static_cast<size_t>(rank)] = error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

inline std::vector<float> values_of(const Model& model) {
  const auto values = model.arena().values();
  return {values.begin(), values.end()};
}

class PsTest : public ::testing::Test {
 protected:
  void SetUp() override { blas::set_threads(1); }
};

// A parameter-server test with a fresh output directory of its own (named by the test and the
// process, so parallel test processes never share one), removed afterwards.
class PsDirTest : public PsTest {
 protected:
  void SetUp() override {
    PsTest::SetUp();
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = std::filesystem::temp_directory_path() / ("dtbench-ps-" + test + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

}  // namespace dtbench::pstest
