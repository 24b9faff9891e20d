// The whole zero-copy path (wire_frames.h) between real workers and a real sync server: a
// parameter of an odd size, cut into keys of an odd size and into messages whose slices end in
// the middle of keys (different sizes each way), lands bit for bit where core's optimizer puts
// it, step after step (momentum carried over; the server's snapshots recycled from the third
// version on), by Push then Pull and by PushPull, whose answer is the values of the step it made.
#include <cmath>
#include <cstring>
#include <thread>

#include "core/optim/optimizer.h"
#include "core/tensor/param_arena.h"
#include "paramserver/ps_connection.h"
#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

constexpr int64_t kFloats = 100003;  // prime: no size below divides it

float gradient_value(int worker, int step, int64_t i) {
  return std::sin(0.001f * static_cast<float>(i * (worker + 2) + step)) * (worker == 0 ? 1.0f : -0.37f);
}

TEST(WirePath, OddSizesSplitMidKeyArriveBitForBit) {
  Param payload{.name = "payload", .shape = {kFloats}};
  ParamArena arena;
  arena.bind({&payload});
  std::vector<float> expected(kFloats);  // the arena may be longer: it pads its parameters
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = 0.25f * static_cast<float>(i % 97) - 3.0f;
  std::copy(expected.begin(), expected.end(), arena.values().begin());
  const OptimizerConfig optimizer = sgd_momentum();
  ParameterServerOptions o;
  o.run_id = "test-run";
  o.worker_count = 2;
  o.checkpoints = false;
  o.placement = {1, 4097, PlacementPolicy::Balanced};
  o.max_message_bytes = 10000;  // pulls: 2500 floats a message
  ParameterServer server(arena, optimizer, o);

  const KeyIndex index = KeyIndex::in_arena(server.placement(), 0);
  ASSERT_EQ(index.float_count, kFloats);
  auto reference = make_optimizer(optimizer, kFloats);
  std::vector<std::vector<float>> pulled(2, std::vector<float>(kFloats));
  for (int step = 0; step < 5; ++step) {
    const auto worker = [&](int w) {
      ConnectionOptions connection;
      connection.address = server.address();
      connection.security.auth_token = server.auth_token();
      connection.max_message_bytes = 6004;  // pushes: 1501 floats a message
      PsConnection line(connection);
      line.register_worker("test-run", w, 2);
      std::vector<float> grads(kFloats);
      for (int64_t i = 0; i < kFloats; ++i) grads[static_cast<size_t>(i)] = gradient_value(w, step, i);
      float* values = pulled[static_cast<size_t>(w)].data();
      if (step < 2) {
        EXPECT_EQ(line.push(w, step, index, grads.data()).version, step + 1);
        EXPECT_EQ(line.pull(w, index, values).version, step + 1);
      } else {
        const PushPullResult result = line.push_pull(w, step, index, grads.data(), values);
        EXPECT_EQ(result.version, step + 1);
        EXPECT_GT(result.bytes_received, kFloats * 4);
        EXPECT_LE(result.written_seconds, result.answered_seconds);
        EXPECT_LE(result.answered_seconds, result.seconds);
      }
    };
    std::thread second(worker, 1);
    worker(0);
    second.join();
    // What the server must have done: the workers' gradients summed in worker order from zero,
    // halved, and core's optimizer step.
    reference->step(expected, two_worker_average(kFloats, [step](int worker, int64_t i) {
                      return gradient_value(worker, step, i);
                    }));
    for (int w = 0; w < 2; ++w) {
      EXPECT_EQ(std::memcmp(pulled[static_cast<size_t>(w)].data(), expected.data(), kFloats * sizeof(float)), 0)
          << "worker " << w << " after step " << step;
    }
  }
}

// A PushPull the server refuses (a gradient for a version it is not at) ends with the refusal and
// writes no values.
TEST(WirePath, ARefusedPushPullLeavesTheValuesAlone) {
  OnePayloadServer one(64);
  ConnectionOptions connection = one.connection();
  connection.retries = 0;
  PsConnection line(connection);
  line.register_worker("test-run", 0, 1);
  ParameterServer& server = *one.server;
  const KeyIndex index = KeyIndex::in_arena(server.placement(), 0);
  std::vector<float> grads(static_cast<size_t>(index.float_count), 1.0f);
  std::vector<float> values(static_cast<size_t>(index.float_count), 42.0f);
  expect_version_3_refused(line, index, values);
  EXPECT_EQ(server.version(), 0);
  EXPECT_EQ(line.push_pull(0, 0, index, grads.data(), values.data()).version, 1);  // the server goes on
  EXPECT_EQ(values[0], one.arena.values()[0] - 1.0f);
}

}  // namespace
}  // namespace dtbench::pstest
