// Hostile requests by the thousand: every RPC class gets malformed requests (and, against a server
// with a token, requests with none or a wrong one), and none may change the parameters (compared
// bit for bit), stop the server or grow it without bound. The CTest run sends a few per class;
// DTBENCH_PS_FUZZ_REQUESTS=3000 sends more and prints the counts and the process's RSS.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <random>

#include <google/protobuf/stubs/logging.h>

#include "ps_fixture.h"
#include "raw_client.h"

namespace dtbench::pstest {
namespace {

using grpc::StatusCode;

int64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

int requests_per_class() {
  const char* text = std::getenv("DTBENCH_PS_FUZZ_REQUESTS");
  return text != nullptr ? std::max(1, std::atoi(text)) : 60;
}

// One server and a client that sends it nothing a correct worker would.
class Fuzzer {
 public:
  Fuzzer(ParameterServer& server, std::string token) : server_(server), token_(std::move(token)), raw_(server.address()) {
    index_ = KeyIndex::in_shard(server.placement(), 0);
    valid_ = whole_push(index_, 0, 0, 0.5f);
  }

  // The token a request carries: against a server with one, half carry none or a wrong one.
  std::string token() {
    if (token_.empty() || coin()) return token_;
    const std::string wrong[] = {"", "wrong", token_ + "x", token_.substr(0, token_.size() - 1), std::string(5000, 'T')};
    return wrong[pick(5)];
  }
  // Printable text, or (one time in four) any bytes: protobuf refuses a string field that is not
  // UTF-8 before the service sees it (UNIMPLEMENTED here), so most junk must be valid to reach it.
  std::string junk(size_t max_length) {
    std::string text(pick(max_length + 1), '\0');
    const bool binary = pick(4) == 0;
    for (char& c : text) c = static_cast<char>(binary ? pick(256) : 32 + pick(95));
    return text;
  }
  // Out of range, and never -1 (Shutdown(-1) is a real "stop now").
  int bad_worker() { return coin() ? -2 - static_cast<int>(pick(1u << 30)) : 2 + static_cast<int>(pick(1u << 30)); }

  grpc::Status register_call() {
    switch (pick(3)) {
      case 0: return raw_.register_worker(token(), 0, 2, coin() ? junk(100) : std::string(8192, 'r'));
      case 1: return raw_.register_worker(token(), bad_worker(), 2, "test-run");
      default: return raw_.register_worker(token(), 0, 1 + 2 * static_cast<int>(pick(1000)), "test-run");
    }
  }
  grpc::Status push_call() { return raw_.push(token(), spoiled_push()); }
  grpc::Status push_pull_one_call() { return raw_.push_pull_one(token(), one_message(spoiled_push())); }
  grpc::Status pull_call() { return raw_.pull(token(), coin() ? bad_worker() : 1); }  // 1 never registers
  grpc::Status stats_call() { return raw_.stats(token()); }
  grpc::Status checkpoint_call() { return raw_.checkpoint(token()); }  // no checkpoint path: refused
  grpc::Status shutdown_call() { return raw_.shutdown(token(), bad_worker()); }
  grpc::Status publish_call() {
    const std::string value = coin() ? junk(4096) : std::string((1 << 20) + 1 + pick(1 << 20), 'v');
    return raw_.publish(token(), coin() ? "test-run" : junk(300), coin() ? junk(300) : std::string(5000, 'n'), value);
  }
  grpc::Status fetch_call() { return raw_.fetch(token(), coin() ? "test-run" : junk(300), junk(300), coin()); }

  RawClient& raw() { return raw_; }

 private:
  bool coin() { return pick(2) == 0; }
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  ps::KeySlice& any_slice(std::vector<ps::PushChunk>& c) {
    ps::PushChunk& chunk = c[pick(c.size())];
    return *chunk.mutable_slices(static_cast<int>(pick(static_cast<size_t>(chunk.slices_size()))));
  }

  int64_t offset_by() {
    const auto by = 1 + static_cast<int64_t>(pick(1000));
    return coin() ? by : -by;
  }
  int64_t bad_version() {
    return coin() ? std::numeric_limits<int64_t>::min() + static_cast<int64_t>(pick(1000))
                  : 1 + static_cast<int64_t>(pick(1u << 30));
  }
  void spoil_float(ps::KeySlice& slice) {
    const float bad = coin() ? std::numeric_limits<float>::quiet_NaN() : -std::numeric_limits<float>::infinity();
    std::memcpy(slice.mutable_data()->data() + 4 * pick(slice.data().size() / 4), &bad, 4);
  }

  // A copy of a valid push with one thing wrong, each of which the server must refuse.
  std::vector<ps::PushChunk> spoiled_push() {
    std::vector<ps::PushChunk> c = valid_;
    switch (pick(10)) {
      case 0: any_slice(c).set_key(coin() ? -1 - static_cast<int64_t>(pick(1u << 20)) : 1'000'000 + offset_by()); break;
      case 1: any_slice(c).mutable_data()->append(junk(63) + "x"); break;  // past the key's end, or not whole floats
      case 2: {
        ps::KeySlice& slice = any_slice(c);
        slice.mutable_data()->resize(slice.data().size() - 1 - pick(std::min<size_t>(64, slice.data().size())));
        break;
      }
      case 3: {
        ps::KeySlice& slice = any_slice(c);
        slice.set_float_offset(slice.float_offset() + offset_by());
        break;
      }
      case 4: c.erase(c.begin() + static_cast<std::ptrdiff_t>(pick(c.size()))); break;  // floats missing
      case 5: c.push_back(c[pick(c.size())]); break;                                   // a key twice
      case 6: {
        const int64_t version = bad_version();
        for (auto& chunk : c) chunk.set_version(version);
        break;
      }
      case 7: {
        const int worker = bad_worker();
        for (auto& chunk : c) chunk.set_worker(worker);
        break;
      }
      case 8: spoil_float(any_slice(c)); break;
      default: c.clear(); break;  // an empty push
    }
    return c;
  }

  ParameterServer& server_;
  std::string token_;
  RawClient raw_;
  KeyIndex index_;
  std::vector<ps::PushChunk> valid_;
  std::mt19937_64 rng_{20261123};
};

void fuzz(bool with_token) {
  // Protobuf logs every string field that is not UTF-8, on both sides: thousands of lines.
  const google::protobuf::LogSilencer quiet;
  ServerSet servers = start_servers(1, 2, PsMode::Sync, sgd_momentum(), [&](ParameterServerOptions& o) {
    o.security.insecure = !with_token;
    if (!with_token) o.security.auth_token.clear();
  });
  ParameterServer& server = servers[0];
  Fuzzer fuzzer(server, server.auth_token());
  ASSERT_TRUE(fuzzer.raw().register_worker(server.auth_token(), 0, 2).ok());  // so pushes reach the deep checks
  const ShardState before = server.state();
  const int64_t rss_before = rss_bytes();
  const std::map<std::string, std::function<grpc::Status()>> classes = {
      {"Register", [&] { return fuzzer.register_call(); }},     {"Push", [&] { return fuzzer.push_call(); }},
      {"Pull", [&] { return fuzzer.pull_call(); }},             {"Stats", [&] { return fuzzer.stats_call(); }},
      {"Checkpoint", [&] { return fuzzer.checkpoint_call(); }}, {"Shutdown", [&] { return fuzzer.shutdown_call(); }},
      {"Publish", [&] { return fuzzer.publish_call(); }},       {"Fetch", [&] { return fuzzer.fetch_call(); }},
      {"PushPullOne", [&] { return fuzzer.push_pull_one_call(); }}};
  const int per_class = requests_per_class();
  for (const auto& [name, call] : classes) {
    std::map<StatusCode, int> codes;
    for (int i = 0; i < per_class; ++i) ++codes[call().error_code()];
    std::string counts;
    for (const auto& [code, count] : codes) counts += fmt::format(" {}:{}", static_cast<int>(code), count);
    std::printf("fuzz %s token: %-10s %d requests, status code:count%s\n", with_token ? "with" : "without", name.c_str(),
                per_class, counts.c_str());
    // Stats, Fetch and a Publish of a small value under the run's id are what a worker may do.
    const bool may_succeed = name == "Stats" || name == "Fetch" || name == "Publish";
    if (!may_succeed) {
      EXPECT_EQ(codes[StatusCode::OK], 0) << name << ": a hostile request succeeded";
    }
  }
  const ShardState after = server.state();
  EXPECT_EQ(after.version, before.version);
  ASSERT_EQ(after.values.size(), before.values.size());
  EXPECT_EQ(std::memcmp(after.values.data(), before.values.data(), before.values.size() * sizeof(float)), 0)
      << "hostile requests changed the parameters";
  EXPECT_FALSE(server.wait_for(0.0)) << "hostile requests stopped the server";
  EXPECT_TRUE(fuzzer.raw().stats(server.auth_token()).ok()) << "the server no longer answers";
  const int64_t rss_after = rss_bytes();
  std::printf("fuzz %s token: RSS %.1f MiB before, %.1f MiB after\n", with_token ? "with" : "without",
              static_cast<double>(rss_before) / (1 << 20), static_cast<double>(rss_after) / (1 << 20));
  EXPECT_LT(rss_after - rss_before, int64_t{256} << 20) << "the server grew without bound";
}

TEST_F(PsTest, FuzzedRequestsChangeNothingWithAToken) { fuzz(true); }
TEST_F(PsTest, FuzzedRequestsChangeNothingWithoutAToken) { fuzz(false); }

}  // namespace
}  // namespace dtbench::pstest
