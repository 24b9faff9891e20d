// Requests an attacker or a broken worker sends, each refused with a status that says why, the
// parameters left bit for bit as they were: gradients whose sum or update is not finite, async
// versions out of range, a port another server holds, the control store filled without bound, an
// echo of a huge request field.
#include <cstring>
#include <future>
#include <limits>

#include "ps_fixture.h"
#include "raw_client.h"

namespace dtbench::pstest {
namespace {

using grpc::StatusCode;

constexpr float kHuge = std::numeric_limits<float>::max();

bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class Refusals : public PsTest {
 protected:
  void start(int workers, PsMode mode, OptimizerConfig optimizer = sgd_momentum()) {
    servers_ = start_servers(1, workers, mode, optimizer);
    index_ = KeyIndex::in_shard(servers_[0].placement(), 0);
    raw_ = std::make_unique<RawClient>(servers_[0].address());
    for (int w = 0; w < workers; ++w) ASSERT_TRUE(raw_->register_worker(token(), w, workers).ok());
  }
  std::string token() { return servers_[0].auth_token(); }

  ServerSet servers_;
  KeyIndex index_;
  std::unique_ptr<RawClient> raw_;
};

TEST_F(Refusals, SyncStepWhoseSumOverflowsIsRefusedAndTheValuesStay) {
  start(2, PsMode::Sync);
  const ShardState before = servers_[0].state();
  auto other = std::async(std::launch::async, [&] { return raw_->push(token(), whole_push(index_, 1, 0, kHuge)); });
  const grpc::Status first = raw_->push(token(), whole_push(index_, 0, 0, kHuge));
  const grpc::Status second = other.get();
  for (const grpc::Status& status : {first, second}) {
    EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_NE(status.error_message().find("version 0"), std::string::npos) << status.error_message();
    EXPECT_NE(status.error_message().find("worker(s) 0, 1"), std::string::npos) << status.error_message();
    EXPECT_NE(status.error_message().find("not finite"), std::string::npos) << status.error_message();
  }
  const ShardState after = servers_[0].state();
  EXPECT_EQ(after.version, 0);
  EXPECT_TRUE(bit_identical(after.values, before.values)) << "a refused step changed the parameters";
  EXPECT_TRUE(bit_identical(after.optimizer_state, before.optimizer_state)) << "... or the momentum";
  EXPECT_EQ(after.optimizer_steps, before.optimizer_steps);
  // The run can go on: a finite step is applied.
  auto again = std::async(std::launch::async, [&] { return raw_->push(token(), whole_push(index_, 1, 0, 0.5f)); });
  EXPECT_TRUE(raw_->push(token(), whole_push(index_, 0, 0, 0.5f)).ok());
  EXPECT_TRUE(again.get().ok());
  EXPECT_EQ(servers_[0].version(), 1);
}

TEST_F(Refusals, AsyncUpdateThatOverflowsIsRefusedAndTheValuesStay) {
  // A learning rate of 4: the finite gradient FLT_MAX moves every value past FLT_MAX.
  start(1, PsMode::Async, OptimizerConfig{.name = "sgd", .learning_rate = 4.0f});
  const ShardState before = servers_[0].state();
  const grpc::Status status = raw_->push(token(), whole_push(index_, 0, 0, kHuge));
  EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("worker 0"), std::string::npos) << status.error_message();
  EXPECT_NE(status.error_message().find("not finite"), std::string::npos) << status.error_message();
  const ShardState after = servers_[0].state();
  EXPECT_EQ(after.version, 0);
  EXPECT_TRUE(bit_identical(after.values, before.values)) << "a refused update changed the parameters";
  EXPECT_EQ(after.optimizer_steps, before.optimizer_steps);
  EXPECT_TRUE(raw_->push(token(), whole_push(index_, 0, 0, 0.5f)).ok());
  EXPECT_EQ(servers_[0].version(), 1);
}

TEST_F(Refusals, AsyncVersionsOutsideZeroToTheServersAreInvalid) {
  start(1, PsMode::Async);
  const ShardState before = servers_[0].state();
  for (int64_t version : {int64_t{-1}, std::numeric_limits<int64_t>::min(), int64_t{1},
                          std::numeric_limits<int64_t>::max()}) {
    SCOPED_TRACE(version);
    const grpc::Status status = raw_->push(token(), whole_push(index_, 0, version, 0.5f));
    EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_NE(status.error_message().find(std::to_string(version)), std::string::npos) << status.error_message();
  }
  const ShardState after = servers_[0].state();
  EXPECT_EQ(after.version, 0);
  EXPECT_TRUE(bit_identical(after.values, before.values));
  EXPECT_TRUE(servers_[0].stats_json()["updates"]["staleness"]["histogram"].empty());
  EXPECT_EQ(servers_[0].stats_json()["updates"]["gradients_rejected"], 4);
}

TEST_F(Refusals, APortInUseIsAnErrorNamingTheAddress) {
  start(1, PsMode::Sync);
  const std::string taken = servers_[0].address();
  try {
    start_servers(1, 1, PsMode::Sync, sgd_momentum(), [&](ParameterServerOptions& o) { o.listen = taken; });
    FAIL() << "a second server listened on " << taken;
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find(taken), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("in use"), std::string::npos) << error.what();
  }
}

TEST_F(Refusals, ControlStoreIsBoundedPerValueAndInTotal) {
  start(1, PsMode::Sync);
  const std::string mib(1 << 20, 'v');
  grpc::Status status = raw_->publish(token(), "test-run", "big", mib + mib);
  EXPECT_EQ(status.error_code(), StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_NE(status.error_message().find("1 MiB"), std::string::npos) << status.error_message();
  int accepted = 0;
  for (; accepted < 100; ++accepted) {
    status = raw_->publish(token(), "test-run", fmt::format("value/{}", accepted), mib.substr(0, mib.size() - 64));
    if (!status.ok()) break;
  }
  EXPECT_EQ(status.error_code(), StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_NE(status.error_message().find("32 MiB"), std::string::npos) << status.error_message();
  EXPECT_GE(accepted, 30);
  EXPECT_LE(accepted, 32);
  // A value fetched with erase gives its room back.
  ASSERT_TRUE(raw_->fetch(token(), "test-run", "value/0", true).ok());
  EXPECT_TRUE(raw_->publish(token(), "test-run", "again", mib.substr(0, mib.size() - 64)).ok());
}

TEST_F(Refusals, ErrorsEchoAtMostAShortPrefixOfARequestField) {
  start(1, PsMode::Sync);
  const std::string long_run_id(8192, 'r');
  for (const grpc::Status& status : {raw_->register_worker(token(), 0, 1, long_run_id),
                                     raw_->publish(token(), long_run_id)}) {
    EXPECT_EQ(status.error_code(), StatusCode::FAILED_PRECONDITION) << status.error_message().substr(0, 200);
    EXPECT_LT(status.error_message().size(), 400u);
    EXPECT_NE(status.error_message().find(std::string(64, 'r') + "…"), std::string::npos) << status.error_message();
  }
}

}  // namespace
}  // namespace dtbench::pstest
