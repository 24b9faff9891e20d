// PushPullOne, the unary PushPull for a push of one message (ps.proto): a worker takes it exactly
// when its push is one message of at most 64 KiB, and the stream otherwise; both give, step after step, bit for
// bit the values of core's optimizer on the averaged gradient; a generated stub reads the answer
// as a protobuf PushPullChunk holding the server's values; a refused call writes no values; a
// call the server holds past the worker's deadline ends at that deadline.
#include <cmath>
#include <cstring>
#include <thread>

#include "core/optim/optimizer.h"
#include "core/tensor/param_arena.h"
#include "core/util/clock.h"
#include "paramserver/ps_connection.h"
#include "ps_fixture.h"
#include "raw_client.h"

namespace dtbench::pstest {
namespace {

constexpr int64_t kFloats = 1031;      // prime: keys of 257 floats and a short last one
constexpr int64_t kStreamBytes = 1000;  // 250 floats a message: the push takes five

float gradient_value(int worker, int step, int64_t i) {
  return std::cos(0.01f * static_cast<float>(i * (worker + 3) + step)) * (worker == 0 ? 0.7f : -1.3f);
}

// A sync server holding one flat parameter of kFloats floats.
struct FlatServer {
  Param payload{.name = "payload", .shape = {kFloats}};
  ParamArena arena;
  std::vector<float> initial;
  std::unique_ptr<ParameterServer> server;

  FlatServer(int workers, const OptimizerConfig& optimizer, double timeout_seconds = 10.0 * kTimeScale) {
    arena.bind({&payload});
    for (int64_t i = 0; i < kFloats; ++i) initial.push_back(0.125f * static_cast<float>(i % 31) - 2.0f);
    std::copy(initial.begin(), initial.end(), arena.values().begin());
    ParameterServerOptions o;
    o.run_id = "test-run";
    o.worker_count = workers;
    o.checkpoints = false;
    o.timeout_seconds = timeout_seconds;
    o.placement = {1, 257, PlacementPolicy::Balanced};
    server = std::make_unique<ParameterServer>(arena, optimizer, o);
  }

  KeyIndex index() const { return KeyIndex::in_arena(server->placement(), 0); }

  ConnectionOptions line_options(int64_t max_message_bytes = kDefaultMaxMessageBytes) const {
    ConnectionOptions o;
    o.address = server->address();
    o.security.auth_token = server->auth_token();
    o.max_message_bytes = max_message_bytes;
    o.retries = 0;
    return o;
  }
};

// One sync step of both workers against `flat`, each on its own line with messages of at most
// `max_message_bytes`; their results, the values each pulled in `pulled`.
std::vector<PushPullResult> both_workers_step(FlatServer& flat, int64_t max_message_bytes, int step,
                                              std::vector<std::vector<float>>& pulled) {
  const KeyIndex index = flat.index();
  std::vector<PushPullResult> results(2);
  const auto worker = [&](int w) {
    PsConnection line(flat.line_options(max_message_bytes));
    line.register_worker("test-run", w, 2);
    std::vector<float> grads(kFloats);
    for (int64_t i = 0; i < kFloats; ++i) grads[static_cast<size_t>(i)] = gradient_value(w, step, i);
    float* values = pulled[static_cast<size_t>(w)].data();
    results[static_cast<size_t>(w)] = line.push_pull(w, step, index, grads.data(), values);
  };
  std::thread second(worker, 1);
  worker(0);
  second.join();
  return results;
}

TEST(PushPullOne, OneMessageAndStreamGiveCoresOptimizerBitForBit) {
  const OptimizerConfig optimizer = sgd_momentum();
  FlatServer one(2, optimizer), stream(2, optimizer);
  std::vector<float> expected = one.initial;
  auto reference = make_optimizer(optimizer, kFloats);
  std::vector<std::vector<float>> by_one(2, std::vector<float>(kFloats)), by_stream = by_one;
  for (int step = 0; step < 4; ++step) {
    for (const PushPullResult& result : both_workers_step(one, kDefaultMaxMessageBytes, step, by_one)) {
      EXPECT_EQ(result.version, step + 1);
      EXPECT_EQ(result.written_seconds, 0.0) << "a push of one message went as a stream";
      EXPECT_GT(result.bytes_received, kFloats * 4);
    }
    for (const PushPullResult& result : both_workers_step(stream, kStreamBytes, step, by_stream)) {
      EXPECT_EQ(result.version, step + 1);
      EXPECT_GT(result.written_seconds, 0.0) << "a push of five messages went as one call";
    }
    // The server's step, computed apart: the gradients summed in worker order from zero, halved,
    // and core's optimizer.
    reference->step(expected, two_worker_average(kFloats, [step](int worker, int64_t i) {
                      return gradient_value(worker, step, i);
                    }));
    for (int w = 0; w < 2; ++w) {
      const size_t bytes = kFloats * sizeof(float);
      EXPECT_EQ(std::memcmp(by_one[static_cast<size_t>(w)].data(), expected.data(), bytes), 0)
          << "one message, worker " << w << ", step " << step;
      EXPECT_EQ(std::memcmp(by_stream[static_cast<size_t>(w)].data(), expected.data(), bytes), 0)
          << "stream, worker " << w << ", step " << step;
    }
  }
}

// A push of one message but more than 64 KiB goes as the stream, where it is faster.
TEST(PushPullOne, APushOfMoreThan64KiBGoesAsTheStream) {
  constexpr int64_t kLarge = 16 * 1024 + 1;  // 64 KiB and a float, in one 1 MiB message
  OnePayloadServer one(kLarge);
  PsConnection line(one.connection());
  line.register_worker("test-run", 0, 1);
  const KeyIndex index = KeyIndex::in_arena(one.server->placement(), 0);
  std::vector<float> grads(kLarge, 1.0f), values(kLarge, 0.0f);
  const PushPullResult result = line.push_pull(0, 0, index, grads.data(), values.data());
  EXPECT_EQ(result.version, 1);
  EXPECT_GT(result.written_seconds, 0.0) << "a push of more than 64 KiB went as one unary call";
  EXPECT_EQ(values[kLarge - 1], one.arena.values()[kLarge - 1] - 1.0f);
}

// The answer is protobuf's PushPullChunk: a generated stub reads the version and the server's own
// values of that version, every key once.
TEST(PushPullOne, AGeneratedStubReadsTheAnswer) {
  FlatServer flat(1, OptimizerConfig{.name = "sgd", .learning_rate = 1.0f});
  const KeyIndex index = flat.index();
  RawClient raw(flat.server->address());
  ASSERT_TRUE(raw.register_worker(flat.server->auth_token(), 0).ok());
  const std::vector<ps::PushChunk> push = whole_push(index, 0, 0, 0.5f);
  ASSERT_EQ(push.size(), 1u);
  ps::PushPullChunk answer;
  const auto context = raw.context(flat.server->auth_token());
  const grpc::Status status = raw.stub->PushPullOne(context.get(), push[0], &answer);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(answer.version(), 1);
  const std::vector<float> now = flat.server->state().values;
  std::vector<float> received(static_cast<size_t>(kFloats), NAN);
  SliceAssembler assembler(index, received.data(), /*require_finite=*/true);
  for (const ps::KeySlice& slice : answer.slices()) ASSERT_EQ(assembler.absorb(slice), "");
  EXPECT_EQ(assembler.incomplete(), "");
  ASSERT_EQ(now.size(), received.size());
  EXPECT_EQ(std::memcmp(now.data(), received.data(), kFloats * sizeof(float)), 0);
  EXPECT_EQ(received[3], flat.initial[3] - 0.5f);
}

TEST(PushPullOne, ARefusedCallWritesNoValues) {
  FlatServer flat(1, OptimizerConfig{.name = "sgd", .learning_rate = 1.0f});
  const KeyIndex index = flat.index();
  PsConnection line(flat.line_options());
  line.register_worker("test-run", 0, 1);
  std::vector<float> grads(kFloats, 1.0f), values(kFloats, 42.0f);
  expect_version_3_refused(line, index, values);
  EXPECT_EQ(flat.server->version(), 0);
  const PushPullResult result = line.push_pull(0, 0, index, grads.data(), values.data());  // the server goes on
  EXPECT_EQ(result.version, 1);
  EXPECT_EQ(result.written_seconds, 0.0);
  EXPECT_EQ(values[0], flat.initial[0] - 1.0f);
}

// A sync server waits for the second worker far longer than the first one's deadline: the call
// ends at the deadline with an error that says so, not when the server gives up.
TEST(PushPullOne, ACallTheServerHoldsEndsAtTheWorkersDeadline) {
  FlatServer flat(2, OptimizerConfig{.name = "sgd", .learning_rate = 1.0f}, 30.0);
  ConnectionOptions options = flat.line_options();
  const double deadline = 0.5 * kTimeScale;
  options.push_timeout_seconds = deadline;
  PsConnection line(options);
  line.register_worker("test-run", 0, 2);
  const KeyIndex index = flat.index();
  std::vector<float> grads(kFloats, 1.0f), values(kFloats, 42.0f);
  const auto start = SteadyClock::now();
  try {
    line.push_pull(0, 0, index, grads.data(), values.data());
    FAIL() << "a push-pull of a step that cannot complete returned";
  } catch (const IoError& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find("DEADLINE_EXCEEDED"), std::string::npos) << text;
    EXPECT_NE(text.find(flat.server->address()), std::string::npos) << text;
  }
  const double waited = seconds_since(start);
  EXPECT_GE(waited, 0.99 * deadline);
  EXPECT_LT(waited, deadline + 2.0 * kTimeScale);
  EXPECT_EQ(values, std::vector<float>(kFloats, 42.0f));
}

}  // namespace
}  // namespace dtbench::pstest
