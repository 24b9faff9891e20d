// Who may talk to a server, and what it does with requests a correct worker never sends: every
// refusal has the right status and a message, and leaves the parameters and version untouched.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "paramserver/wire_format.h"
#include "ps_fixture.h"
#include "raw_client.h"

namespace dtbench::pstest {
namespace {

using grpc::StatusCode;

void set_float(ps::KeySlice& slice, size_t i, float value) {
  std::memcpy(slice.mutable_data()->data() + i * sizeof(float), &value, sizeof(float));
}

class Access : public PsTest {
 protected:
  void start(const std::string& token) {
    servers_ = start_servers(1, 1, PsMode::Sync, sgd_momentum(), [&](ParameterServerOptions& o) {
      o.security.auth_token = token;
      o.security.insecure = token.empty();  // the malformed-request tests call without a token
    });
    initial_ = servers_[0].state().values;
    index_ = KeyIndex::in_shard(servers_[0].placement(), 0);
  }
  void expect_untouched() {
    const ShardState state = servers_[0].state();
    EXPECT_EQ(state.version, 0);
    EXPECT_EQ(state.values, initial_) << "a refused request changed the parameters";
  }

  ServerSet servers_;
  std::vector<float> initial_;
  KeyIndex index_;
};

TEST(Security, ConstantTimeEqualCompares) {
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "abcd"));
  EXPECT_FALSE(constant_time_equal("", "a"));
  EXPECT_TRUE(constant_time_equal("", ""));
}

TEST(Security, ATokenFileOthersCanReadIsRefused) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "dtbench-ps-open-token";
  std::ofstream(file) << "s3cret\n";
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                         std::filesystem::perms::group_read | std::filesystem::perms::others_read);
  try {
    read_token_file(file.string());
    FAIL() << "a token file anyone can read was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("readable by group or others"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(file.string()), std::string::npos) << error.what();
  }
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(read_token_file(file.string()), "s3cret");
  std::filesystem::remove(file);
}

TEST(Security, GeneratedTokensAre32RandomBytesInHex) {
  const std::string a = generate_token(), b = generate_token();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
}

TEST_F(Access, WithoutTheTokenEveryCallIsUnauthenticated) {
  start("s3cret-token");
  RawClient raw(servers_[0].address());
  for (const std::string& token : {std::string(), std::string("wrong"), std::string("s3cret-tokeN"),
                                   std::string("s3cret-token-and-more")}) {
    SCOPED_TRACE("token '" + token + "'");
    grpc::Status status = raw.register_worker(token, 0);
    EXPECT_EQ(status.error_code(), StatusCode::UNAUTHENTICATED);
    EXPECT_NE(status.error_message().find("token"), std::string::npos) << status.error_message();
    EXPECT_EQ(raw.push(token, whole_push(index_, 0, 0, 0.5f)).error_code(), StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(raw.pull(token, 0).error_code(), StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(raw.stats(token).error_code(), StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(raw.publish(token, "test-run").error_code(), StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(raw.shutdown(token, -1).error_code(), StatusCode::UNAUTHENTICATED);
  }
  expect_untouched();
  EXPECT_FALSE(servers_[0].wait_for(0.0)) << "an unauthenticated Shutdown stopped the server";

  // A worker with the wrong token gets an InputError that says so.
  auto model = small_model();
  PsTransportOptions options = transport_options(servers_, PsMode::Sync, 0, 1);
  options.security.auth_token = "wrong";
  PsTransport wrong(options);
  try {
    wrong.start(*model);
    FAIL() << "a wrong token was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("UNAUTHENTICATED"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(servers_[0].address()), std::string::npos) << error.what();
  }
  expect_untouched();

  // With the token, the same calls work.
  EXPECT_TRUE(raw.register_worker("s3cret-token", 0).ok());
  options.security.auth_token = "s3cret-token";
  PsTransport right(options);
  right.start(*model);
  compute_gradients(*model, make_batch(1, 4));
  right.finish_step(*model, 0);
  EXPECT_EQ(servers_[0].version(), 1);
}

TEST_F(Access, MalformedRequestsAreInvalidArgumentAndChangeNothing) {
  start("");
  RawClient raw(servers_[0].address());
  ASSERT_TRUE(raw.register_worker("", 0).ok());
  const auto valid = whole_push(index_, 0, 0, 0.5f);
  ASSERT_GT(valid.size(), 1u);

  struct Case {
    std::string name;
    std::function<void(std::vector<ps::PushChunk>&)> spoil;
  };
  const std::vector<Case> cases = {
      {"unknown key", [](auto& c) { c[0].mutable_slices(0)->set_key(999999); }},
      {"key past its end", [](auto& c) { c[0].mutable_slices(0)->mutable_data()->append(std::string(16, '\0')); }},
      {"not whole floats", [](auto& c) { c[0].mutable_slices(0)->mutable_data()->append("abc"); }},
      {"missing floats", [](auto& c) { c.pop_back(); }},
      {"slice out of order", [](auto& c) { c[0].mutable_slices(0)->set_float_offset(4); }},
      {"key twice", [](auto& c) { c.push_back(c[0]); }},
      {"wrong step", [](auto& c) { for (auto& chunk : c) chunk.set_version(5); }},
      {"step in the past", [](auto& c) { for (auto& chunk : c) chunk.set_version(-1); }},
      {"NaN gradient", [](auto& c) { set_float(*c[0].mutable_slices(0), 3, std::numeric_limits<float>::quiet_NaN()); }},
      {"Inf gradient", [](auto& c) { set_float(*c.back().mutable_slices(0), 0, -std::numeric_limits<float>::infinity()); }},
      {"worker id out of range", [](auto& c) { for (auto& chunk : c) chunk.set_worker(3); }},
      {"negative worker id", [](auto& c) { for (auto& chunk : c) chunk.set_worker(-1); }},
      {"header changes midway", [](auto& c) { c[1].set_worker(3); }},
      {"empty push", [](auto& c) { c.clear(); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto chunks = valid;
    c.spoil(chunks);
    const grpc::Status status = raw.push("", chunks);
    EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_FALSE(status.error_message().empty());
    expect_untouched();
  }
  // Worker ids out of range elsewhere too.
  EXPECT_EQ(raw.register_worker("", 1).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(raw.register_worker("", -2).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(raw.pull("", 7).error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(raw.shutdown("", 9).error_code(), StatusCode::INVALID_ARGUMENT);
  expect_untouched();
  EXPECT_GE(servers_[0].stats_json()["traffic"]["rejected_calls"].get<int64_t>(), 10);

  // The server is still fine: the valid push goes through and moves the version.
  ps::PushReply reply;
  ASSERT_TRUE(raw.push("", valid, &reply).ok());
  EXPECT_EQ(reply.version(), 1);
  EXPECT_NE(servers_[0].state().values, initial_);
}

TEST_F(Access, WorkersOfAnotherRunOrWorldAreRefused) {
  start("");
  RawClient raw(servers_[0].address());
  const grpc::Status other_run = raw.register_worker("", 0, 1, "another-run");
  EXPECT_EQ(other_run.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(other_run.error_message().find("test-run"), std::string::npos) << other_run.error_message();
  EXPECT_NE(other_run.error_message().find("another-run"), std::string::npos) << other_run.error_message();
  EXPECT_EQ(raw.register_worker("", 0, 4).error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(raw.publish("", "another-run").error_code(), StatusCode::FAILED_PRECONDITION);
  // An unregistered worker may not push.
  EXPECT_EQ(raw.push("", whole_push(index_, 0, 0, 0.5f)).error_code(), StatusCode::FAILED_PRECONDITION);
  expect_untouched();

  auto model = small_model();
  PsTransportOptions options = transport_options(servers_, PsMode::Sync, 0, 1);
  options.run_id = "another-run";
  PsTransport transport(options);
  EXPECT_THROW(transport.start(*model), InputError);
  // A transport of the other mode is told so.
  PsTransport async_transport(transport_options(servers_, PsMode::Async, 0, 1));
  try {
    async_transport.start(*model);
    FAIL() << "an async worker joined a sync server";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("sync mode"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace dtbench::pstest
