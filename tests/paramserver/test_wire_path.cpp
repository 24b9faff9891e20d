// The whole zero-copy path (wire_frames.h) between real workers and a real sync server: a
// parameter of an odd size, cut into keys of an odd size and into messages whose slices end in
// the middle of keys (different sizes each way), lands bit for bit where core's optimizer puts
// it, step after step (momentum carried over; the server's snapshots recycled from the third
// version on).
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
  for (int step = 0; step < 3; ++step) {
    const auto worker = [&](int w) {
      ConnectionOptions connection;
      connection.address = server.address();
      connection.security.auth_token = server.auth_token();
      connection.max_message_bytes = 6004;  // pushes: 1501 floats a message
      PsConnection line(connection);
      line.register_worker("test-run", w, 2);
      std::vector<float> grads(kFloats);
      for (int64_t i = 0; i < kFloats; ++i) grads[static_cast<size_t>(i)] = gradient_value(w, step, i);
      EXPECT_EQ(line.push(w, step, index, grads.data()).version, step + 1);
      EXPECT_EQ(line.pull(w, index, pulled[static_cast<size_t>(w)].data()).version, step + 1);
    };
    std::thread second(worker, 1);
    worker(0);
    second.join();
    // What the server must have done: the workers' gradients summed in worker order from zero,
    // halved, and core's optimizer step.
    std::vector<float> average(kFloats);
    for (int64_t i = 0; i < kFloats; ++i) {
      float sum = 0.0f;
      sum += gradient_value(0, step, i);
      sum += gradient_value(1, step, i);
      average[static_cast<size_t>(i)] = sum * 0.5f;
    }
    reference->step(expected, average);
    for (int w = 0; w < 2; ++w) {
      EXPECT_EQ(std::memcmp(pulled[static_cast<size_t>(w)].data(), expected.data(), kFloats * sizeof(float)), 0)
          << "worker " << w << " after step " << step;
    }
  }
}

}  // namespace
}  // namespace dtbench::pstest
