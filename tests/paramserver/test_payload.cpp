// A parameter far larger than gRPC's 4 MB message limit (2M floats, 8 MiB, one key) goes through:
// it travels as ~1 MiB slices, and the result equals core's update.
#include <cmath>

#include "core/layers/linear.h"
#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

std::unique_ptr<Model> wide_model() {
  auto net = std::make_unique<Sequential>();
  net->emplace<Linear>("fc", 2048, 1024, Init::XavierUniform);  // weight: 2,097,152 floats
  auto model = std::make_unique<Model>("wide", Shape{2048}, 1024, std::move(net));
  model->initialize(kSeed);
  return model;
}

Batch wide_batch(uint64_t seed) {
  Batch batch{Tensor({2, 2048}), {}};
  Rng rng(seed);
  for (float& x : batch.images.span()) x = rng.normal();
  batch.labels = {static_cast<int32_t>(rng.below(1024)), static_cast<int32_t>(rng.below(1024))};
  return batch;
}

TEST_F(PsTest, EightMegabyteParameterGoesThroughInSlices) {
  const OptimizerConfig optimizer = sgd_momentum();
  auto server_model = wide_model();
  ParameterServerOptions o;
  o.run_id = "test-run";
  o.placement = {1, int64_t{4} << 20, PlacementPolicy::Balanced};  // keys of up to 16 MiB: one key
  ParameterServer server(server_model->arena(), optimizer, o);
  ASSERT_EQ(server.placement().keys().size(), 2u);
  ASSERT_EQ(server.placement().keys()[0].float_count, 2048 * 1024);

  auto model = wide_model();
  PsTransportOptions options;
  options.servers = {server.address()};
  options.run_id = "test-run";
  options.key_float_count = int64_t{4} << 20;
  options.security.auth_token = server.auth_token();
  PsTransport transport(options);
  transport.start(*model);

  auto reference = wide_model();
  auto core_optimizer = make_optimizer(optimizer, reference->arena().count());
  for (int step = 0; step < 2; ++step) {
    compute_gradients(*model, wide_batch(step));
    const SyncTimes times = transport.finish_step(*model, step);
    EXPECT_GT(times.bytes_sent, 8 << 20);
    EXPECT_GT(times.bytes_received, 8 << 20);
    compute_gradients(*reference, wide_batch(step));
    core_optimizer->step(reference->arena().values(), reference->arena().grads());
  }
  const auto got = values_of(*model), expected = values_of(*reference);
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - double(expected[i])));
  EXPECT_LT(worst, 1e-6);
  const auto traffic = server.stats_json()["traffic"];
  EXPECT_GT(traffic["bytes_in"].get<int64_t>(), 16 << 20);
}

}  // namespace
}  // namespace dtbench::pstest
