// dtbench bench ps: what one synchronous step of the parameter servers costs a worker, payload size
// by payload size. A ROUND is what a ps-sync worker does after backward:
//
//   worker w:  PushPull: gradient ──► server: wait for every worker, mean, optimizer step ──► values
//              |──── push ────|──────────────────── wait ─────────────────────|──── pull ────|
//
// one call per shard (paramserver/README.md): push: until every byte of the gradient was written;
// wait: until every shard's answer began (the other workers' pushes and the server's update);
// pull: receiving the new values (the slowest shard's). Each round a worker sends `size` bytes and
// receives `size` bytes, so GB/s = 2 · size / round time.
//
// nccl-tests' order, as `bench allreduce`: warm up, agree on the iteration count, timed rounds, then
// one untimed round whose result is checked. Without --servers, every size gets fresh servers in
// this process on 127.0.0.1:0, holding one flat parameter of that size (no model is needed: a
// ParamArena of one Param is the layout) and running SGD at learning rate 1. The timed rounds push
// zeros, which leave the values as they are; the check round pushes small integers, after which
// every value must be its old value minus the workers' mean gradient. Workers are threads, each
// with its own connections, laid out from what the servers answer to Register — so --servers can
// point at `dtbench ps` shards of any model (their optimizer must then be SGD lr 1 for the check).
// Such shards may run in async mode: a round is then one worker's push and pull with no barrier
// (wait: its own gradient applied), and before the check every worker waits until the servers hold
// every worker's rounds. With --world, each host's process runs its share of the workers.
#include "launch/bench/ps.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "allreduce/mpi_info.h"
#include "core/profile/profiler.h"
#include "core/util/clock.h"
#include "core/util/error.h"
#include "launch/bench/byte_sizes.h"
#include "launch/bench/grpc_echo.h"
#include "launch/bench/ps_rounds.h"
#include "launch/bench/tcp_loopback.h"
#include "launch/bench/timed_rounds.h"
#include "launch/blueprint/number_option.h"
#include "paramserver/parameter_server.h"
#include "paramserver/for_each_shard.h"
#include "paramserver/ps_client.h"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;


struct SizeResult {
  int64_t bytes = 0;
  int iterations = 0;
  double mean_seconds = 0;  // the slowest worker's mean round
  double p50_seconds = 0;   // over rounds, each round's time being its slowest worker's
  double p99_seconds = 0;
  double min_seconds = 0;
  double push_seconds = 0;  // push, wait, pull: means over workers and rounds
  double wait_seconds = 0;
  double pull_seconds = 0;
  // The servers' own account of the timed rounds (their Stats before and after), per update, of the
  // shard where it was largest: the update pass, the sync step's wait from the first gradient to
  // the last, and the queue before the update thread.
  double update_seconds = 0;
  double straggler_seconds = 0;
  double queueing_seconds = 0;
  double gbps = 0;          // 2 · bytes / mean_seconds / 1e9
  int64_t wrong_count = 0;  // over every worker's pulled values in the check round
  bool async = false;       // the servers' mode: a round is then one worker's, without a barrier
  TcpRoundResult tcp;       // the same payload echoed over one plain TCP loopback connection
  TcpRoundResult tcp_workers;  // ... over one connection per worker at once
  GrpcEchoResult grpc{};       // a gRPC unary call echoing the payload (sizes up to kGrpcEchoMaxBytes)
};

SizeResult summarise(const std::vector<std::vector<RoundTimes>>& timed, int64_t bytes, int64_t wrong) {
  SizeResult r{.bytes = bytes,
               .iterations = static_cast<int>(timed[0].size()),
               .wrong_count = wrong,
               .tcp = {},
               .tcp_workers = {}};
  std::vector<double> slowest(timed[0].size(), 0.0);
  double count = 0;
  for (const auto& rounds : timed) {
    double mean = 0;
    for (size_t k = 0; k < rounds.size(); ++k) {
      slowest[k] = std::max(slowest[k], rounds[k].total);
      mean += rounds[k].total / static_cast<double>(rounds.size());
      r.push_seconds += rounds[k].push;
      r.wait_seconds += rounds[k].wait;
      r.pull_seconds += rounds[k].pull;
      ++count;
    }
    r.mean_seconds = std::max(r.mean_seconds, mean);
  }
  r.push_seconds /= count;
  r.wait_seconds /= count;
  r.pull_seconds /= count;
  std::sort(slowest.begin(), slowest.end());
  r.p50_seconds = percentile(slowest, 0.50);
  r.p99_seconds = percentile(slowest, 0.99);
  r.min_seconds = slowest.front();
  if (r.mean_seconds > 0) r.gbps = 2.0 * static_cast<double>(bytes) / r.mean_seconds / 1e9;
  return r;
}

// Per update of the timed rounds, the largest of the shards.
void add_server_times(SizeResult& r, const std::vector<ServerTimes>& before, const std::vector<ServerTimes>& after) {
  for (size_t shard = 0; shard < after.size(); ++shard) {
    const auto updates = static_cast<double>(after[shard].updates - before[shard].updates);
    if (updates <= 0) continue;
    const auto per_update = [&](double ServerTimes::*field) {
      return (after[shard].*field - before[shard].*field) / updates;
    };
    r.update_seconds = std::max(r.update_seconds, per_update(&ServerTimes::update_seconds));
    r.straggler_seconds = std::max(r.straggler_seconds, per_update(&ServerTimes::straggler_seconds));
    r.queueing_seconds = std::max(r.queueing_seconds, per_update(&ServerTimes::queueing_seconds));
  }
}

// One size against `servers`: connect, warm up, agree on the iterations, timed rounds of zeros,
// the check round, goodbye. `on_failure` stops in-process servers.
SizeResult bench_size(const PsBenchOptions& o, const std::vector<std::string>& servers,
                      const std::function<void()>& on_failure) {
  std::vector<std::unique_ptr<BenchWorker>> workers;
  for (int w = 0; w < o.workers; ++w) workers.push_back(std::make_unique<BenchWorker>(o.first_worker + w, o, servers));
  const auto worker = [&](int w) -> BenchWorker& { return *workers[static_cast<size_t>(w)]; };

  const int warmup = o.iterations > 0 ? o.warmup : std::max(o.warmup, 1);
  std::vector<double> estimates(static_cast<size_t>(o.workers));
  run_workers(o.workers, [&](int w) {
    worker(w).connect();
    estimates[static_cast<size_t>(w)] = warm_up(worker(w), warmup);
  }, on_failure);
  // Decided once, here, for every worker: a worker that did one round more would wait at the sync
  // server for the others until the step timed out.
  int iterations = o.iterations;
  if (iterations <= 0) {
    const double slowest = *std::max_element(estimates.begin(), estimates.end());
    iterations = timed_rounds(o.target_ms, slowest);
  }

  std::vector<std::vector<RoundTimes>> timed(static_cast<size_t>(o.workers));
  const std::vector<ServerTimes> servers_before = worker(0).server_times();
  run_workers(o.workers, [&](int w) {
    auto& rounds = timed[static_cast<size_t>(w)];
    rounds.reserve(static_cast<size_t>(iterations));
    for (int k = 0; k < iterations; ++k) rounds.push_back(worker(w).round());
  }, on_failure);
  const std::vector<ServerTimes> servers_after = worker(0).server_times();
  const int64_t wrong = check_round(workers, o.world, on_failure);
  run_workers(o.workers, [&](int w) { worker(w).goodbye(); }, on_failure);
  SizeResult result = summarise(timed, static_cast<int64_t>(worker(0).values().size() * sizeof(float)), wrong);
  result.async = worker(0).async();
  add_server_times(result, servers_before, servers_after);
  return result;
}

std::string load_average() {
  std::ifstream file("/proc/loadavg");
  double one = 0, five = 0, fifteen = 0;
  if (!(file >> one >> five >> fifteen)) return "unknown";
  return fmt::format("{:.2f} {:.2f} {:.2f}", one, five, fifteen);
}

void print_header(const PsBenchOptions& o) {
  const std::string where =
      o.servers.empty()
          ? fmt::format("{} in-process sync server shard(s) per size on 127.0.0.1 (SGD lr 1), keys of at most {} KiB",
                        o.shards, kKeyFloatCount * 4 / 1024)
          : fmt::format("the servers {} (sync or async, as they run)", fmt::join(o.servers, ","));
  const std::string whose = o.world == o.workers ? fmt::format("{} worker thread(s)", o.workers)
                                                 : fmt::format("workers {}..{} of {} (threads; the others in other processes)",
                                                               o.first_worker, o.first_worker + o.workers - 1, o.world);
  fmt::print("# dtbench bench ps: {} against {}; host {}, {} cores, load average {}\n", whose, where, host_name(),
             std::thread::hardware_concurrency(), load_average());
  fmt::print("# gRPC messages <= {} KiB; warm-up {}; iterations {}\n", kDefaultMaxMessageBytes / 1024, o.warmup,
             o.iterations > 0 ? fmt::format("{}", o.iterations)
                              : fmt::format("automatic (about {} ms per size, {} to {})", o.target_ms, kMinTimedRounds,
                                            kMaxTimedRounds));
  fmt::print("# round: every worker pushes a gradient of `size` bytes to the shards and pulls `size` bytes of new values "
             "(one ps-sync step: a PushPull call per shard); time: the slowest worker's mean round; p50/p99: over rounds, each its slowest "
             "worker's\n");
  fmt::print("# push: until the gradient is written; wait: until the servers' answers begin (the other workers + the "
             "update); pull: receiving the values (means over workers). A push of one message of at most 64 KiB is "
             "one unary call (PushPullOne), its write not timed apart: push 0, its time in wait\n");
  fmt::print("# update: the servers' own time per update in the timed rounds (their Stats: averaging the gradients, "
             "the optimizer step and the checks; the shard that took longest), a part of wait\n");
  fmt::print("# GB/s = 2 * size / time, 1e9 B/s (bytes pushed plus pulled per worker). Against bench allreduce of the "
             "same size: compare time; as a rate, GB/s / 2 (sent per worker) is the counterpart of busbw "
             "(= algbw * 2(n-1)/n, sent per rank). check: wrong values after the untimed check round\n");
  fmt::print("# tcp: the same size sent to an echo thread and back over one plain TCP loopback connection in this "
             "process, measured right after the row (no gRPC, no update): tcp us per round, tcp GB/s as above; "
             "%tcp = GB/s / tcp GB/s; x tcp = time / tcp us (for small sizes: rounds per TCP round trip)\n");
  fmt::print("# tcpN: the same size echoed over N = {} such connections at once, one per worker, each round begun on "
             "all together (the bytes the server moves for the workers, moved by plain TCP on the same cores): tcpN "
             "GB/s per connection; %tcpN = GB/s / tcpN GB/s\n",
             o.workers);
  fmt::print("# grpc: a gRPC unary call that only hands its request back (same library, transport and callback "
             "server, in this process, sizes up to {} KiB): grpc us, its mean; x grpc = time / grpc us, how many such "
             "calls a round costs\n",
             kGrpcEchoMaxBytes / 1024);
  fmt::print("{:>10}  {:>6} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>5} {:>9} {:>7} {:>5} {:>6} {:>9} {:>6} "
             "{:>9} {:>6}\n",
             "size", "iters", "time us", "p50 us", "p99 us", "push us", "wait us", "update us", "pull us", "GB/s",
             "check", "tcp us", "tcp GB/s", "%tcp", "x tcp", "tcpN GB/s", "%tcpN", "grpc us", "x grpc");
}

void print_row(const SizeResult& r) {
  const bool echoed = r.grpc.iterations > 0;
  fmt::print("{:>10}  {:>6} {:>10.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>7.3f} {:>5} {:>9.1f} "
             "{:>7.3f} {:>4.0f}% {:>6.2f} {:>9.3f} {:>5.0f}% {:>9} {:>6}\n",
             size_text(r.bytes), r.iterations, 1e6 * r.mean_seconds, 1e6 * r.p50_seconds, 1e6 * r.p99_seconds,
             1e6 * r.push_seconds, 1e6 * r.wait_seconds, 1e6 * r.update_seconds, 1e6 * r.pull_seconds, r.gbps,
             r.wrong_count == 0 ? std::string("ok") : fmt::format("{}", r.wrong_count), 1e6 * r.tcp.mean_seconds,
             r.tcp.gbps, 100.0 * r.gbps / r.tcp.gbps, r.mean_seconds / r.tcp.mean_seconds, r.tcp_workers.gbps,
             100.0 * r.gbps / r.tcp_workers.gbps, echoed ? fmt::format("{:.1f}", 1e6 * r.grpc.mean_seconds) : "-",
             echoed ? fmt::format("{:.2f}", r.mean_seconds / r.grpc.mean_seconds) : "-");
  std::fflush(stdout);  // rows as they complete
}

nlohmann::json row_json(const SizeResult& r) {
  return {{"bytes", r.bytes},
          {"count", r.bytes / 4},
          {"iterations", r.iterations},
          {"time_us", 1e6 * r.mean_seconds},
          {"p50_us", 1e6 * r.p50_seconds},
          {"p99_us", 1e6 * r.p99_seconds},
          {"min_us", 1e6 * r.min_seconds},
          {"push_us", 1e6 * r.push_seconds},
          {"wait_us", 1e6 * r.wait_seconds},
          {"pull_us", 1e6 * r.pull_seconds},
          {"server_update_us", 1e6 * r.update_seconds},
          {"server_straggler_wait_us", 1e6 * r.straggler_seconds},
          {"server_queueing_us", 1e6 * r.queueing_seconds},
          {"gbps", r.gbps},
          {"wrong_elements", r.wrong_count},
          {"tcp_iterations", r.tcp.iterations},
          {"tcp_us", 1e6 * r.tcp.mean_seconds},
          {"tcp_gbps", r.tcp.gbps},
          {"gbps_over_tcp", r.gbps / r.tcp.gbps},
          {"time_over_tcp", r.mean_seconds / r.tcp.mean_seconds},
          {"tcp_connections", r.tcp_workers.connections},
          {"tcp_connections_iterations", r.tcp_workers.iterations},
          {"tcp_connections_us", 1e6 * r.tcp_workers.mean_seconds},
          {"tcp_connections_gbps", r.tcp_workers.gbps},
          {"gbps_over_tcp_connections", r.gbps / r.tcp_workers.gbps},
          {"grpc_echo_iterations", r.grpc.iterations},
          {"grpc_echo_us", 1e6 * r.grpc.mean_seconds},
          {"grpc_echo_p50_us", 1e6 * r.grpc.p50_seconds},
          {"time_over_grpc_echo", r.grpc.iterations > 0 ? nlohmann::json(r.mean_seconds / r.grpc.mean_seconds)
                                                        : nlohmann::json()}};
}

void write_json(const PsBenchOptions& o, const nlohmann::json& rows, bool async) {
  const nlohmann::json report = {
      {"benchmark", "ps"},
      {"workers", o.workers},
      {"first_worker", o.first_worker},
      {"world", o.world},
      {"servers", o.servers.empty() ? nlohmann::json("in-process") : nlohmann::json(o.servers)},
      {"shards", o.servers.empty() ? o.shards : static_cast<int>(o.servers.size())},
      {"mode", async ? "async" : "sync"},
      {"host", host_name()},
      {"load_average", load_average()},
      {"datatype", "float32"},
      {"warmup", o.warmup},
      {"iterations_requested", o.iterations},
      {"target_ms", o.target_ms},
      {"time", "slowest worker's mean round (push + wait + pull), of this process's workers"},
      {"gbps", "2 * bytes / time: pushed plus pulled per worker"},
      {"tcp", "the same bytes to an echo thread and back over one plain TCP loopback connection, same run"},
      {"tcp_connections", "the same bytes over one such connection per worker at once, each round begun together; "
                          "GB/s per connection"},
      {"grpc_echo", "a gRPC unary call handing the same bytes straight back, in this process (sizes up to 1 MiB)"},
      {"rows", rows}};
  std::ofstream file(o.json);
  file << report.dump(2) << "\n";
  if (!file) throw IoError(fmt::format("could not write {}", o.json));
}

// The servers' own start-up and shutdown lines would break the table: warnings and errors only.
class QuietLog {
 public:
  QuietLog() : level_(spdlog::get_level()) { spdlog::set_level(std::max(level_, spdlog::level::warn)); }
  ~QuietLog() { spdlog::set_level(level_); }
  QuietLog(const QuietLog&) = delete;
  QuietLog& operator=(const QuietLog&) = delete;

 private:
  spdlog::level::level_enum level_;
};

// --world: this process's workers are some of the world's; the rest, in other processes (one per
// host of a cluster), push to the same --servers, whose barrier keeps every round together. Each
// process must then do the same rounds: an automatic count, decided per process, could differ.
void check_world(PsBenchOptions& o) {
  if (o.world == 0) o.world = o.first_worker + o.workers;
  if (o.first_worker + o.workers > o.world) {
    fail_input("--first-worker {} with --workers {} goes beyond --world {}: worker ids run from 0 to world - 1",
               o.first_worker, o.workers, o.world);
  }
  if (o.world == o.workers) return;
  if (o.servers.empty()) {
    fail_input("--world {} with {} worker(s) here needs --servers: the other workers' processes must reach the same "
               "servers", o.world, o.workers);
  }
  if (o.iterations <= 0) {
    fail_input("--world {} with {} worker(s) here needs --iters: every process must time the same number of rounds",
               o.world, o.workers);
  }
}

void run_ps_bench(PsBenchOptions o, bool sizes_given, bool shards_given) {
  if (!o.servers.empty() && sizes_given) {
    fail_input("--sizes and --servers exclude each other: the servers' model is the payload");
  }
  if (!o.servers.empty() && shards_given && o.shards != static_cast<int>(o.servers.size())) {
    fail_input("--shards {} but --servers lists {} servers", o.shards, o.servers.size());
  }
  check_world(o);
  const std::vector<int64_t> sizes = o.servers.empty() ? parse_size_range(o.sizes) : std::vector<int64_t>{0};
  o.auth_token = !o.auth_token_file.empty() ? read_token_file(o.auth_token_file) : generate_token();
  QuietLog quiet;
  print_header(o);
  nlohmann::json rows = nlohmann::json::array();
  bool async = false;
  int64_t wrong = 0;
  for (int64_t bytes : sizes) {
    SizeResult result;
    if (o.servers.empty()) {
      LocalServers local(bytes / 4, o);
      result = bench_size(o, local.addresses(), [&] { local.stop(); });
    } else {
      result = bench_size(o, o.servers, [] {});
    }
    if (result.bytes > 0) {
      result.tcp = measure_tcp_rounds(result.bytes, o.target_ms, o.warmup);
      result.tcp_workers =
          o.workers > 1 ? measure_tcp_rounds(result.bytes, o.target_ms, o.warmup, o.workers) : result.tcp;
      if (result.bytes <= kGrpcEchoMaxBytes) result.grpc = measure_grpc_echo(result.bytes, o.target_ms, o.warmup);
    }
    print_row(result);
    rows.push_back(row_json(result));
    async = result.async;
    wrong += result.wrong_count;
  }
  if (!o.json.empty()) write_json(o, rows, async);
  if (wrong > 0) throw LogicError(fmt::format("parameter-server verification failed: {} wrong values", wrong));
}

}  // namespace

void add_ps_bench(CLI::App& bench) {
  auto* command = bench.add_subcommand(
      "ps", "Push + pull round time of parameter servers over payload sizes (compare: bench allreduce)");
  auto o = std::make_shared<PsBenchOptions>();
  auto* sizes = command->add_option("--sizes", o->sizes,
                                    "Payload sizes MIN:MAX in bytes, doubling, or one size; several joined by commas")
                    ->capture_default_str();
  command->add_option("--workers", o->workers, "Worker threads (the sync servers wait for all of them each round)")
      ->check(positive_number())
      ->capture_default_str();
  command->add_option("--first-worker", o->first_worker,
                      "The first of this process's worker ids (with --world: the others run elsewhere)")
      ->check(non_negative_number());
  command->add_option("--world", o->world,
                      "Workers in all processes, which the servers wait for (default: --first-worker + --workers)")
      ->check(positive_number());
  command->add_option("--servers", o->servers, "Running servers (sync or async) host:port,... in shard order (default: start "
                                               "--shards in-process servers per size; the payload is their model)")
      ->delimiter(',');
  auto* shards = command->add_option("--shards", o->shards, "In-process servers per size")
                     ->check(positive_number())
                     ->capture_default_str();
  command->add_option("--iters", o->iterations, "Timed rounds per size (0: about --target-ms each, 3 to 1000)")
      ->check(non_negative_number());
  command->add_option("--warmup", o->warmup, "Untimed rounds first")->check(non_negative_number());
  command->add_option("--target-ms", o->target_ms, "Automatic iteration count: time per size")
      ->check(positive_number());
  command->add_option("--run-id", o->run_id, "Run id the workers register with")->capture_default_str();
  command->add_option("--timeout-s", o->timeout_s, "Sync step timeout (servers) and call deadline (workers)")
      ->check(positive_number());
  command->add_option("--json", o->json, "Also write every number to this JSON file");
  command->add_option("--auth-token-file", o->auth_token_file, "The --servers' auth token (their ps.token)");
  command->callback([o, sizes, shards] { run_ps_bench(*o, sizes->count() > 0, shards->count() > 0); });
}

}  // namespace dtbench
