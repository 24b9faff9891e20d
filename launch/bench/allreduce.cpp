// dtbench bench allreduce, under mpirun: for each message size (doubling from the smallest to the
// largest) and each algorithm, nccl-tests' order — warm up, agree on the iteration count, barrier,
// timed loop, combine across ranks (allreduce_timing.h) — then a separate untimed run whose result
// is checked element by element (allreduce_verify.h). Rank 0 prints one row per size with the
// algorithms side by side. The timed runs sum (average=false): averaging would add a scaling pass
// that the two algorithms do over different amounts of the buffer. `nccl` sums a buffer in the
// GPU's own memory into a second one (out of place, so that its check sees a sum that wrote
// nothing); with --device cuda, ring and mpi sum a buffer in memory the GPU and the host share,
// moved to the host and back around each allreduce, as training stages gradients.
#include "launch/bench/allreduce.h"

#include "launch/bench/byte_sizes.h"
#include "launch/bench/nccl_check.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "allreduce/allreduce_timing.h"
#include "allreduce/allreduce_verify.h"
#include "allreduce/mpi_check.h"
#include "allreduce/mpi_info.h"
#include "allreduce/ring_chunk.h"
#include "allreduce/mpi_session.h"
#include "allreduce/nccl/register.h"
#include "comm/transport_catalogue.h"
#include "core/device/device.h"
#include "core/tensor/tensor.h"
#include "core/tuning/summing_speed.h"
#include "core/util/cpu_quota.h"
#include "core/util/error.h"
#include "launch/blueprint/number_option.h"

namespace dtbench {

namespace {

// The allreduce transports over MPI on the host (ring, mpi): the bench's default.
std::vector<std::string> allreduce_on_host() {
  return transport_names_where([](const TransportRow& row) { return row.family == TransportFamily::MpiAllreduce; });
}

struct AllreduceBenchOptions {
  std::string sizes = "4B:256MiB";
  std::vector<std::string> transports = allreduce_on_host();
  std::string device = "cpu";  // where ring's and mpi's buffer lives
  int iterations = 0;  // 0: automatic, about target_ms per size and algorithm
  int warmup = 5;
  double target_ms = 200;
  int64_t chunk_kb = 0;  // 0: chosen per path (ring_chunk.h)
  std::string ring_path = "auto";
  double timeout_s = 60;
  std::string json;
};

struct AlgorithmResult {
  AllreduceTiming timing;  // rank 0's view
  double algbw_gbps = 0;   // bytes / time
  double busbw_gbps = 0;   // algbw · 2(n−1)/n: what each link carries, comparable across n
  int64_t wrong_count = 0;  // summed over ranks
};

// What every size and algorithm share: the communicator, the buffers, the options.
struct BenchContext {
  explicit BenchContext(const AllreduceBenchOptions& o) : options(o) {}
  const AllreduceBenchOptions& options;
  std::vector<std::string> algorithms;  // ring, mpi, nccl
  MpiComm comm;
  int rank = 0;
  int world = 1;
  std::unique_ptr<DeviceBackend> device;  // --device cuda, or nccl asked for: this rank's GPU
  DeviceBackend* staging = nullptr;       // --device cuda: ring and mpi stage through the host
  std::shared_ptr<float[]> storage;       // the largest size's elements, reused by every size
  std::span<float> buffer;
  std::vector<float> scratch;  // the ring's receive buffer, reused likewise
  std::unique_ptr<NcclBenchBuffer> nccl;
  std::unique_ptr<SharedRing> shared;  // the ring's shared-memory path, when it takes it
  RingChunks chunks;                   // the ring's chunk of each size, resolved once the path is known
  WaitPolicy wait;
  Watchdog watchdog;           // keeps the deadline of the blocking MPI_Allreduce
};

constexpr double kSpinSeconds = 0.01;

bool is_nccl(const std::string& name) {
  const TransportRow* row = find_transport_row(name);
  return row != nullptr && row->family == TransportFamily::Nccl;
}

AllreduceOptions allreduce_options(BenchContext& c, AllreduceAlgorithm algorithm, int64_t count) {
  return {.buffer = c.buffer.data(),
          .count = count,
          .comm = c.comm,
          .algorithm = algorithm,
          .average = false,
          .chunk_bytes = c.chunks.bytes_for(count * static_cast<int64_t>(sizeof(float))),
          .tag = 0,
          .wait = c.wait,
          .scratch = &c.scratch,
          .watchdog = &c.watchdog,
          .shared = c.shared.get()};
}

// One iteration of `name` over the first `count` floats; with a device, ring and mpi stage
// through the host around it (the transports' finish_step does the same in training).
std::function<void()> iteration(BenchContext& c, const std::string& name, int64_t count) {
  if (is_nccl(name)) return [&c, count] { c.nccl->sum(count); };
  const AllreduceOptions options = allreduce_options(c, parse_allreduce_algorithm(name), count);
  if (c.staging == nullptr) return [options] { allreduce(options); };
  const std::span<float> values = c.buffer.first(static_cast<size_t>(count));
  return [&c, options, values] {
    c.staging->move_to_host(values);
    allreduce(options);
    c.staging->move_to_device(values);
  };
}

// The untimed verification run: returns the number of wrong elements over all ranks, and each
// rank with a wrong element says which. nccl's buffers are filled and read through copies, its
// result poisoned first (nccl_check.h).
int64_t verify(BenchContext& c, const std::string& name, int64_t count) {
  const std::span<float> data = c.buffer.first(static_cast<size_t>(count));
  AllreduceMismatch mismatch;
  if (is_nccl(name)) {
    mismatch = check_nccl_sum(*c.nccl, data, c.rank, c.world);  // out of place, the result poisoned first
  } else {
    fill_allreduce_pattern(data, c.rank, c.world);
    if (c.staging != nullptr) c.staging->move_to_device(data);  // a staged iteration starts from the device's
    iteration(c, name, count)();
    mismatch = check_allreduce_sum(data, c.world);
  }
  if (mismatch.wrong_count > 0) {
    spdlog::error("rank {}: {} allreduce of {} is wrong: {}", c.rank, name, size_text(count * 4), mismatch.text());
  }
  int64_t total = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&mismatch.wrong_count, &total, 1, MPI_INT64_T, MPI_SUM, c.comm, &request),
            "MPI_Iallreduce");
  wait_all({&request, 1}, c.wait);
  return total;
}

AlgorithmResult bench_one(BenchContext& c, const std::string& name, int64_t count) {
  // Zeros for the timed loop: a sum of zeros stays zero however many iterations run, so the data
  // never overflows to infinity nor becomes subnormal (slow on x86) and every iteration does the
  // same work.
  std::fill_n(c.buffer.begin(), count, 0.0f);
  if (is_nccl(name)) c.nccl->fill_zeros(count);
  if (c.staging != nullptr) c.staging->move_to_device(c.buffer.first(static_cast<size_t>(count)));
  AllreduceAlgorithm host_algorithm = AllreduceAlgorithm::Mpi;  // its comm and wait serve nccl's bench too
  if (!is_nccl(name)) host_algorithm = parse_allreduce_algorithm(name);
  AlgorithmResult result;
  result.timing = time_allreduce({.allreduce = allreduce_options(c, host_algorithm, count),
                                  .iteration = iteration(c, name, count),
                                  .warmup_iterations = c.options.warmup,
                                  .iterations = c.options.iterations,
                                  .target_seconds = c.options.target_ms / 1e3});
  const double bytes = static_cast<double>(count) * sizeof(float);
  if (result.timing.mean_seconds > 0) {
    result.algbw_gbps = bytes / result.timing.mean_seconds / 1e9;
    result.busbw_gbps = result.algbw_gbps * 2.0 * (c.world - 1) / c.world;
  }
  result.wrong_count = verify(c, name, count);
  return result;
}

void print_header(const BenchContext& c, int hosts) {
  const auto& o = c.options;
  fmt::print("# dtbench bench allreduce: {} ranks on {} host(s); {}; {}\n", c.world, hosts, mpi_library_version(),
             mpi_thread_level());
  const RingChunk& rule = c.chunks.rule();
  const std::string ring = rule.bytes == 0 ? std::string("no ring")
                           : fmt::format("ring over {} (--ring-path {}), chunk {} B: {}",
                                         c.shared ? "shared memory" : "messages", o.ring_path, rule.bytes, rule.source);
  fmt::print("# float32 sum (average=false); {}; warm-up {}; iterations {}\n", ring, o.warmup,
             o.iterations > 0 ? fmt::format("{}", o.iterations)
                              : fmt::format("automatic (about {} ms per size and algorithm)", o.target_ms));
  for (const RingChunkTiming& t : c.chunks.timings()) {
    fmt::print("# ring chunk for {}: {} B ({} B chunks {:.2f} ms, 1 MiB chunks {:.2f} ms on {}, the slower rank's "
               "median)\n",
               size_text(t.bytes), c.chunks.bytes_for(t.bytes), t.eager_bytes, t.eager_ms, t.large_ms,
               size_text(t.probe_bytes));
  }
  if (c.device) {
    fmt::print("# device {}: {}{}\n", c.device->name(),
               c.staging ? "ring and mpi move the buffer to the host and back around each allreduce"
                         : "ring and mpi sum in host memory",
               c.nccl ? fmt::format("; nccl {} sums in device memory", c.nccl->nccl_version()) : "");
  }
  fmt::print("# waits {}\n", waits_sleep_soon()
                                 ? fmt::format("sleep after a few tries (CPU quota {:g} core: polling would spend it)",
                                               process_cpu_quota_cores())
                             : c.wait.spin_seconds > 0
                                 ? fmt::format("spin up to {:g} ms before yielding (a core per rank)",
                                               1e3 * c.wait.spin_seconds)
                                 : std::string("yield after a short spin (more ranks than cores)"));
  fmt::print("# time: the slowest rank's mean per iteration; p50/p99: over iterations, each taken at its slowest "
             "rank; GB/s = 1e9 B/s; busbw = algbw * 2(n-1)/n; check: wrong elements in the untimed run\n");
  std::string groups = fmt::format("{:>10}", "");
  std::string names = fmt::format("{:>10}", "size");
  for (const std::string& a : c.algorithms) {
    groups += fmt::format("  {:-^58}", fmt::format(" {} ", a));
    names += fmt::format("  {:>6} {:>10} {:>9} {:>9} {:>7} {:>7} {:>5}", "iters", "time us", "p50 us", "p99 us",
                         "algbw", "busbw", "check");
  }
  if (c.algorithms.size() == 2) {
    groups += fmt::format("  {:^15}", fmt::format("{}/{}", c.algorithms[0], c.algorithms[1]));
    names += fmt::format("  {:>7} {:>7}", "busbw", "time");
  }
  fmt::print("{}\n{}\n", groups, names);
}

void print_row(int64_t bytes, const std::vector<AlgorithmResult>& results) {
  std::string line = fmt::format("{:>10}", size_text(bytes));
  for (const AlgorithmResult& r : results) {
    const AllreduceTiming& t = r.timing;
    line += fmt::format("  {:>6} {:>10.1f} {:>9.1f} {:>9.1f} {:>7.3f} {:>7.3f} {:>5}", t.iterations,
                        1e6 * t.mean_seconds, 1e6 * t.p50_seconds, 1e6 * t.p99_seconds, r.algbw_gbps, r.busbw_gbps,
                        r.wrong_count == 0 ? std::string("ok") : fmt::format("{}", r.wrong_count));
  }
  if (results.size() == 2) {
    // One rank moves no bytes (busbw 0): no ratio then.
    auto ratio = [](double a, double b) { return a > 0 && b > 0 ? fmt::format("{:.2f}", a / b) : std::string("-"); };
    line += fmt::format("  {:>7} {:>7}", ratio(results[0].busbw_gbps, results[1].busbw_gbps),
                        ratio(results[0].timing.mean_seconds, results[1].timing.mean_seconds));
  }
  fmt::print("{}\n", line);
  std::fflush(stdout);  // rows as they complete: a long run shows progress under mpirun
}

nlohmann::json row_json(const BenchContext& c, int64_t bytes, const std::vector<AlgorithmResult>& results) {
  nlohmann::json row = {{"bytes", bytes}, {"count", bytes / 4}};
  for (size_t k = 0; k < results.size(); ++k) {
    const AlgorithmResult& r = results[k];
    row[c.algorithms[k]] = {
        {"iterations", r.timing.iterations},      {"time_us", 1e6 * r.timing.mean_seconds},
        {"p50_us", 1e6 * r.timing.p50_seconds},   {"p99_us", 1e6 * r.timing.p99_seconds},
        {"min_us", 1e6 * r.timing.min_seconds},   {"algbw_gbps", r.algbw_gbps},
        {"busbw_gbps", r.busbw_gbps},             {"wrong_elements", r.wrong_count}};
    if (c.algorithms[k] == kRingTransport && c.chunks.rule().bytes > 0) {
      row[c.algorithms[k]]["chunk_bytes"] = c.chunks.bytes_for(bytes);
    }
  }
  return row;
}

void write_json(const BenchContext& c, int hosts, const nlohmann::json& rows) {
  const std::vector<std::string>& names = c.algorithms;
  const nlohmann::json report = {
      {"benchmark", "allreduce"},       {"world", c.world},
      {"hosts", hosts},                 {"host", host_name()},
      {"mpi_library", mpi_library_version()},
      {"thread_level", mpi_thread_level()},
      {"algorithms", names},            {"datatype", "float32"},
      {"average", false},               {"chunk_bytes", c.chunks.rule().bytes},
      {"chunk_source", c.chunks.rule().source},  {"chunk_timing", c.chunks.timings_json()},
      {"ring_path", c.shared ? "shm" : "messages"},
      // The cost model's charge for summing a received byte, timed here on the cluster's host so
      // that `predict` from this file does not depend on the machine it runs on.
      {"reduce_ns_per_byte", 1e9 * measure_summing_s_per_byte()},
      {"device", c.device ? c.device->name() : "cpu"},
      {"staged_through_host", c.staging != nullptr},
      {"warmup", c.options.warmup},     {"iterations_requested", c.options.iterations},
      {"target_ms", c.options.target_ms},
      {"time", "slowest rank's mean per iteration"},
      {"rows", rows}};
  std::ofstream file(c.options.json);
  file << report.dump(2) << "\n";
  if (!file) throw IoError(fmt::format("could not write {}", c.options.json));
}

// Hosts in the job: ranks that are local rank 0, counted.
int count_hosts(const MpiSession& session, MPI_Comm comm) {
  int leader = session.local_rank() == 0 ? 1 : 0, hosts = 0;
  check_mpi(MPI_Allreduce(&leader, &hosts, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
  return hosts;
}

// Returns the number of wrong elements seen over every size and algorithm.
int64_t run_sizes(BenchContext& c, const std::vector<int64_t>& sizes, int hosts) {
  if (c.rank == 0) print_header(c, hosts);
  nlohmann::json rows = nlohmann::json::array();
  int64_t wrong = 0;
  for (int64_t bytes : sizes) {
    std::vector<AlgorithmResult> results;
    for (const std::string& algorithm : c.algorithms) {
      results.push_back(bench_one(c, algorithm, bytes / 4));
      wrong += results.back().wrong_count;
    }
    if (c.rank != 0) continue;
    print_row(bytes, results);
    rows.push_back(row_json(c, bytes, results));
  }
  if (c.rank == 0 && !c.options.json.empty()) write_json(c, hosts, rows);
  return wrong;
}

// The buffer every size reuses, where --device puts it, and nccl's on this rank's GPU.
void open_buffers(BenchContext& c, int local_rank, int64_t count) {
  const bool wants_nccl = std::any_of(c.algorithms.begin(), c.algorithms.end(), is_nccl);
  if (wants_nccl || c.options.device != "cpu") {
    try {
      c.device = open_device("cuda", local_rank);
    } catch (const InputError& error) {
      fail_input("bench allreduce{}{}: {}", wants_nccl ? " --transport nccl" : "",
                 c.options.device != "cpu" ? " --device cuda" : "", error.what());
    }
  }
  if (c.options.device != "cpu") c.staging = c.device.get();
  c.storage = c.staging != nullptr ? c.device->allocator()(count) : allocate_aligned(count);
  c.buffer = {c.storage.get(), static_cast<size_t>(count)};
  if (wants_nccl) {
    c.nccl = open_nccl_bench_buffer(c.comm, count,
                                    {.timeout_seconds = c.options.timeout_s, .stop_requested = {}, .peers = nullptr});
  }
}

// The bench inside an MPI session: its context (communicators, the nccl buffer and its
// communicator, the device) is made after the session and goes before it, so nothing of it is
// freed after MPI_Finalize. Returns the wrong elements over every size and algorithm.
int64_t bench_in_session(const MpiSession& session, const AllreduceBenchOptions& options,
                         const std::vector<int64_t>& sizes) {
  BenchContext c(options);
  c.algorithms = options.transports;
  c.comm = duplicate_communicator(MPI_COMM_WORLD, {.timeout_seconds = options.timeout_s}, "the bench");
  c.rank = session.rank();
  c.world = session.world();
  c.wait.timeout_seconds = options.timeout_s;
  // Nothing else runs here: with a core per rank, a wait keeps its core (as MPI_Allreduce's own
  // waits do) rather than hand it to another process on a busy machine.
  if (session.local_world() <= static_cast<int>(std::thread::hardware_concurrency())) {
    c.wait.spin_seconds = kSpinSeconds;
  }
  if (c.world == 1 && c.rank == 0) {
    spdlog::warn("bench allreduce on one rank measures nothing that crosses a link (each size is a local copy): "
                 "run it under mpirun -np N with N >= 2");
  }
  try {
    open_buffers(c, session.local_rank(), sizes.back() / 4);
    const bool ring = std::find(c.algorithms.begin(), c.algorithms.end(), kRingTransport) != c.algorithms.end();
    if (ring) {
      const int64_t requested = options.chunk_kb * 1024;
      c.shared = SharedRing::open(parse_ring_path(options.ring_path), c.comm,
                                  requested > 0 ? requested : kSharedMemoryChunkBytes, c.wait);
      c.chunks = resolve_ring_chunks(requested, c.shared != nullptr, c.comm, c.wait, sizes);
    }
    const int64_t wrong = run_sizes(c, sizes, count_hosts(session, c.comm));
    if (c.shared) c.shared->release(c.wait);
    return wrong;
  } catch (const std::exception& error) {
    if (c.world == 1) throw;
    // The other ranks may be waiting for this one: end the job rather than leave them hanging.
    spdlog::error("rank {}: {}", c.rank, error.what());
    MpiSession::abort(dynamic_cast<const InputError*>(&error) != nullptr ? 2 : 1);
  }
}

void run_allreduce_bench(const AllreduceBenchOptions& options) {
  const std::vector<int64_t> sizes = parse_size_range(options.sizes);
  int64_t wrong = 0;
  {
    MpiSession session;
    wrong = bench_in_session(session, options, sizes);
  }
  // Every rank knows the total, so every rank exits non-zero and mpirun does too.
  if (wrong > 0) throw LogicError(fmt::format("allreduce verification failed: {} wrong elements", wrong));
}

}  // namespace

void add_allreduce_bench(CLI::App& bench) {
  auto* command = bench.add_subcommand(
      "allreduce", "Ring allreduce against MPI_Allreduce (and NCCL on GPUs) over message sizes (run under mpirun)");
  auto options = std::make_shared<AllreduceBenchOptions>();
  command->add_option("--sizes", options->sizes,
                      "Sizes MIN:MAX in bytes, doubling (e.g. 4B:256MiB), or one size; several joined by commas "
                      "(64KiB:32MiB,248256)")
      ->capture_default_str();
  command->add_option("--transport", options->transports,
                      "Algorithms to compare, comma-separated: ring, mpi, nccl (NCCL on each rank's GPU)")
      ->delimiter(',')
      ->check(CLI::IsMember(transport_names_where([](const TransportRow& row) { return row.over_mpi(); })))
      ->capture_default_str();
  command->add_option("--device", options->device,
                      "Where ring's and mpi's buffer lives: cpu, or cuda (moved to the host and back around each "
                      "allreduce, as training stages gradients)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  command->add_option("--iters", options->iterations, "Timed iterations per size (0: about --target-ms each)")
      ->check(non_negative_number());
  command->add_option("--warmup", options->warmup, "Untimed iterations first")->check(non_negative_number());
  command->add_option("--target-ms", options->target_ms, "Automatic iteration count: time per size and algorithm")
      ->check(positive_number());
  command->add_option("--chunk-kb", options->chunk_kb,
                      "Ring: pipelining chunk in KiB (0: between two ranks over TCP the largest eager message, or "
                      "1 MiB for each size where it was timed faster; 1 MiB in shared memory and between more)")
      ->check(non_negative_number())
      ->capture_default_str();
  command->add_option("--ring-path", options->ring_path,
                      "Ring: auto (shared memory when every rank is on one host), shm or messages")
      ->check(CLI::IsMember({"auto", "shm", "messages"}))
      ->capture_default_str();
  command->add_option("--timeout-s", options->timeout_s, "A peer silent this long ends the run with an error")
      ->check(positive_number());
  command->add_option("--json", options->json, "Also write every number to this JSON file (rank 0)");
  command->callback([options] { run_allreduce_bench(*options); });
}

}  // namespace dtbench
