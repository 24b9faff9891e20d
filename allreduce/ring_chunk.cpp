#include "allreduce/ring_chunk.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "allreduce/allreduce.h"
#include "allreduce/mpi_check.h"

namespace dtbench {

namespace {

// Open MPI's ob1 match header is 14–24 bytes depending on the build; the eager limit counts it.
constexpr int64_t kMatchHeaderRoom = 64;

// The value of an integer control variable of the MPI tool interface, or -1 when there is none.
int64_t read_integer_cvar(const char* name) {
  int provided = 0;
  // The training thread asks while others may be inside MPI: the tool interface as thread-safe as
  // the library allows.
  if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return -1;
  int64_t value = -1;
  int index = -1;
  MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  int count = 0;
  if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS &&
      MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
    char found_name[256], description[1024];
    int name_length = sizeof(found_name), description_length = sizeof(description);
    int verbosity = 0, binding = 0, scope = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype = MPI_T_ENUM_NULL;
    alignas(8) unsigned char raw[16] = {};
    if (count == 1 &&
        MPI_T_cvar_get_info(index, found_name, &name_length, &verbosity, &type, &enumtype, description,
                            &description_length, &binding, &scope) == MPI_SUCCESS &&
        MPI_T_cvar_read(handle, raw) == MPI_SUCCESS) {
      if (type == MPI_UNSIGNED_LONG || type == MPI_UNSIGNED_LONG_LONG || type == MPI_COUNT ||
          type == MPI_LONG || type == MPI_LONG_LONG) {
        int64_t v = 0;
        std::memcpy(&v, raw, sizeof(v));
        value = v;
      } else if (type == MPI_INT || type == MPI_UNSIGNED) {
        int v = 0;
        std::memcpy(&v, raw, sizeof(v));
        value = v;
      }
    }
    MPI_T_cvar_handle_free(&handle);
  }
  MPI_T_finalize();
  return value;
}

// Timed rounds of each chunk, after one untimed round of each: alternated, so that a slower minute
// of the machine falls on both.
constexpr int kTimedRounds = 3;

double median_of(std::array<double, kTimedRounds> values) {
  std::sort(values.begin(), values.end());
  return values[kTimedRounds / 2];
}

// Each of `values` replaced by the slower rank's (the largest), so that every rank decides alike.
template <size_t N>
std::array<double, N> slowest_of_ranks(const std::array<double, N>& values, MPI_Comm comm, const WaitPolicy& wait) {
  std::array<double, N> slowest{};
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(values.data(), slowest.data(), static_cast<int>(N), MPI_DOUBLE, MPI_MAX, comm, &request),
            "MPI_Iallreduce");
  wait_all({&request, 1}, wait);
  return slowest;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The eager chunk and 1 MiB timed on `probe_bytes` of this run's link and cores, or fewer where a
// round of that many would take more than kChunkProbeRoundSeconds (ring_chunk.h).
RingChunkTiming time_both_chunks(int64_t eager_bytes, int64_t probe_bytes, MPI_Comm comm, const WaitPolicy& wait) {
  std::vector<float> probe(static_cast<size_t>(probe_bytes / static_cast<int64_t>(sizeof(float))), 1.0f);
  std::vector<float> scratch;
  AllreduceOptions o{.buffer = probe.data(), .count = static_cast<int64_t>(probe.size()), .comm = comm,
                     .algorithm = AllreduceAlgorithm::Ring, .average = false, .chunk_bytes = eager_bytes,
                     .wait = wait, .scratch = &scratch};
  // A round of the smallest probe first, untimed: the first bytes between two ranks wait for
  // Open MPI to open the connection, and the first large round for the scratch's pages, which
  // made a 64 MiB round on one host look 0.3 s long where it takes 20 ms.
  const int64_t smallest = 2 * 3 * eager_bytes / static_cast<int64_t>(sizeof(float));  // three chunks a step
  o.count = std::min(smallest, o.count);
  ring_allreduce(o);
  o.count = static_cast<int64_t>(probe.size());
  scratch.assign(probe.size(), 0.0f);
  const auto start = std::chrono::steady_clock::now();
  ring_allreduce(o);  // the eager chunk's untimed round, timed only to size the rest
  const double first = slowest_of_ranks(std::array<double, 1>{seconds_since(start)}, comm, wait)[0];
  if (first > kChunkProbeRoundSeconds) {
    const double share = kChunkProbeRoundSeconds / first;
    o.count = std::max(smallest, static_cast<int64_t>(static_cast<double>(o.count) * share));
    o.count = std::min(o.count, static_cast<int64_t>(probe.size()));
  }
  const std::array<int64_t, 2> chunks = {eager_bytes, kLargeMessageChunkBytes};
  std::array<std::array<double, kTimedRounds>, 2> seconds{};
  for (int round = -1; round < kTimedRounds; ++round) {
    for (size_t c = 0; c < chunks.size(); ++c) {
      if (round < 0 && c == 0) continue;  // the eager chunk's untimed round is done
      o.chunk_bytes = chunks[c];
      std::fill_n(probe.begin(), o.count, 1.0f);  // sums of ones: nothing grows round to round
      const auto round_start = std::chrono::steady_clock::now();
      ring_allreduce(o);
      if (round >= 0) {
        seconds[c][static_cast<size_t>(round)] = seconds_since(round_start);
      }
    }
  }
  const std::array<double, 2> slowest =
      slowest_of_ranks(std::array<double, 2>{median_of(seconds[0]), median_of(seconds[1])}, comm, wait);
  const int64_t probed = o.count * static_cast<int64_t>(sizeof(float));
  return {.bytes = probed, .probe_bytes = probed, .eager_bytes = eager_bytes, .eager_ms = slowest[0] * 1e3,
          .large_ms = slowest[1] * 1e3};
}

// The chunk the rules give this rank (ring_chunk.h), before the ranks agree.
RingChunk chunk_by_rule(int64_t requested, bool shared_memory, bool one_neighbour) {
  if (requested > 0) return {requested, "comm.chunk_kb"};
  if (shared_memory) return {kSharedMemoryChunkBytes, "1 MiB: the slot of the shared-memory ring"};
  if (!one_neighbour) {
    return {kLargeMessageChunkBytes,
            "1 MiB: each rank's left and right neighbours differ, so each connection carries one direction"};
  }
  const int64_t eager_limit = tcp_eager_limit();
  if (eager_limit <= kMatchHeaderRoom) {
    return {kLargeMessageChunkBytes, "1 MiB: the MPI library names no TCP eager limit"};
  }
  return {eager_chunk_bytes(eager_limit),
          fmt::format("the largest eager message of Open MPI's TCP BTL (btl_tcp_eager_limit {} B, less {} B for the "
                      "match header): no rendezvous acknowledgement queues behind the data",
                      eager_limit, kMatchHeaderRoom)};
}

// Ranks receive in chunks of their own size, so all take the smallest any rank picked.
RingChunk smallest_of_ranks(const RingChunk& own, MPI_Comm comm, const WaitPolicy& wait) {
  int64_t smallest = own.bytes;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&own.bytes, &smallest, 1, MPI_INT64_T, MPI_MIN, comm, &request), "MPI_Iallreduce");
  wait_all({&request, 1}, wait);
  if (smallest == own.bytes) return own;
  return {smallest, fmt::format("{} B, the smallest any rank picked (this rank's: {} B, {})", smallest, own.bytes,
                                own.source)};
}

}  // namespace

RingChunks::RingChunks(RingChunk rule, std::vector<RingChunkTiming> timings)
    : rule_(std::move(rule)), timings_(std::move(timings)) {}

int64_t RingChunks::bytes_for(int64_t buffer_bytes) const {
  for (const RingChunkTiming& t : timings_) {
    if (t.bytes != buffer_bytes) continue;
    return large_chunk_wins(t.eager_ms, t.large_ms) ? kLargeMessageChunkBytes : t.eager_bytes;
  }
  return rule_.bytes;
}

nlohmann::json RingChunks::timings_json() const {
  if (timings_.empty()) return nullptr;
  nlohmann::json sizes = nlohmann::json::array();
  for (const RingChunkTiming& t : timings_) {
    sizes.push_back({{"bytes", t.bytes},
                     {"chunk_bytes", bytes_for(t.bytes)},
                     {"probe_bytes", t.probe_bytes},
                     {"eager_bytes", t.eager_bytes},
                     {"eager_ms", t.eager_ms},
                     {"large_bytes", kLargeMessageChunkBytes},
                     {"large_ms", t.large_ms}});
  }
  return sizes;
}

bool large_chunk_wins(double eager_ms, double large_ms) { return large_ms < (1.0 - kLargeChunkMargin) * eager_ms; }

int64_t tcp_eager_limit() { return std::max<int64_t>(read_integer_cvar("btl_tcp_eager_limit"), 0); }

int64_t eager_chunk_bytes(int64_t eager_limit) {
  return std::max<int64_t>((eager_limit - kMatchHeaderRoom) / 4 * 4, 4);
}

RingChunks resolve_ring_chunks(int64_t requested, bool shared_memory, MPI_Comm comm, const WaitPolicy& wait,
                               const std::vector<int64_t>& buffer_bytes) {
  int world = 1;
  check_mpi(MPI_Comm_size(comm, &world), "MPI_Comm_size");
  const bool one_neighbour = world == 2;
  RingChunk rule = smallest_of_ranks(chunk_by_rule(requested, shared_memory, one_neighbour), comm, wait);
  // Every rank now holds the same chunk, so every rank times the same sizes or none.
  const bool eager_between_two =
      requested == 0 && !shared_memory && one_neighbour && rule.bytes < kLargeMessageChunkBytes;
  std::vector<RingChunkTiming> timings;
  if (eager_between_two) {
    std::vector<int64_t> sizes = buffer_bytes;
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    int64_t probe_limit = kChunkProbeMaxBytes;
    for (int64_t bytes : sizes) {
      if (bytes / 2 <= rule.bytes) continue;  // one message a step whichever the chunk
      const int64_t probe_bytes = std::min(bytes, probe_limit) / 4 * 4;
      // Sizes beyond the probe's cap, or beyond what a round of the time allowed held, share its timing.
      if (!timings.empty() && timings.back().probe_bytes == probe_bytes) {
        timings.push_back(timings.back());
      } else {
        timings.push_back(time_both_chunks(rule.bytes, probe_bytes, comm, wait));
        if (timings.back().probe_bytes < probe_bytes) probe_limit = timings.back().probe_bytes;
      }
      timings.back().bytes = bytes;
    }
    if (!timings.empty()) {
      rule.source += "; each size of more than two such chunks timed at start against 1 MiB chunks on this run's link "
                     "and cores, 1 MiB kept where faster";
    }
  }
  return {std::move(rule), std::move(timings)};
}

}  // namespace dtbench
