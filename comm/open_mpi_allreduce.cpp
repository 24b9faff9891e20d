#include "comm/open_mpi_allreduce.h"

#include <algorithm>

namespace dtbench {

namespace {

int floor_log2(int n) {
  int log = 0;
  while ((2 << log) <= n) ++log;
  return log;
}

// coll/tuned's fixed rules for a commutative operation (coll_tuned_decision_fixed.c, v4.1.0 on):
// the first row whose communicator size and byte limit hold.
OpenMpiAllreduce fixed_rule(int ranks, int64_t bytes) {
  using A = OpenMpiAllreduce;
  const auto below = [bytes](int64_t limit) { return bytes < limit; };
  if (ranks < 4) {
    if (below(8)) return A::Ring;
    if (below(4096)) return A::RecursiveDoubling;
    if (below(8192)) return A::Ring;
    if (below(16384)) return A::RecursiveDoubling;
    if (below(65536)) return A::Ring;
    if (below(262144)) return A::SegmentedRing;
    return A::Rabenseifner;
  }
  if (ranks < 8) return below(16) ? A::Ring : below(8192) ? A::RecursiveDoubling : A::Rabenseifner;
  if (ranks < 16) return below(8192) ? A::RecursiveDoubling : A::Rabenseifner;
  if (ranks < 32) return below(64) ? A::SegmentedRing : below(4096) ? A::RecursiveDoubling : A::Rabenseifner;
  if (ranks < 64) return below(128) ? A::SegmentedRing : A::Rabenseifner;
  if (ranks < 128) return below(262144) ? A::RecursiveDoubling : A::Rabenseifner;
  if (ranks < 256) return below(131072) ? A::Nonoverlapping : below(262144) ? A::RecursiveDoubling : A::Rabenseifner;
  if (ranks < 512) return below(4096) ? A::Nonoverlapping : A::Rabenseifner;
  if (ranks < 2048) return below(2048) ? A::Nonoverlapping : below(16384) ? A::RecursiveDoubling : A::Rabenseifner;
  if (ranks < 4096) {
    if (below(2048)) return A::Nonoverlapping;
    if (below(4096)) return A::SegmentedRing;
    return below(16384) ? A::RecursiveDoubling : A::Rabenseifner;
  }
  if (below(2048)) return A::Nonoverlapping;
  if (below(16384)) return A::SegmentedRing;
  if (below(32768)) return A::RecursiveDoubling;
  return A::Rabenseifner;
}

}  // namespace

OpenMpiAllreduce open_mpi_allreduce_choice(int ranks, int64_t bytes, int64_t count) {
  OpenMpiAllreduce algorithm = fixed_rule(ranks, bytes);
  // The segmented ring is asked for with no segment size, so it runs the plain ring.
  if (algorithm == OpenMpiAllreduce::SegmentedRing) algorithm = OpenMpiAllreduce::Ring;
  if (algorithm == OpenMpiAllreduce::Ring && count < ranks) return OpenMpiAllreduce::RecursiveDoubling;
  if (algorithm == OpenMpiAllreduce::Rabenseifner && count < (int64_t{1} << floor_log2(ranks))) {
    return OpenMpiAllreduce::BasicLinear;
  }
  return algorithm;
}

std::string_view open_mpi_allreduce_name(OpenMpiAllreduce algorithm) {
  switch (algorithm) {
    case OpenMpiAllreduce::BasicLinear: return "basic linear";
    case OpenMpiAllreduce::Nonoverlapping: return "reduce then broadcast";
    case OpenMpiAllreduce::RecursiveDoubling: return "recursive doubling";
    case OpenMpiAllreduce::Ring: return "ring";
    case OpenMpiAllreduce::SegmentedRing: return "segmented ring";
    case OpenMpiAllreduce::Rabenseifner: return "rabenseifner";
  }
  return "?";
}

AllreduceSteps ring_allreduce_steps(int ranks, double bytes) {
  const double n = ranks;
  return {.latencies = 2 * (n - 1), .wire_bytes = 2 * (n - 1) / n * bytes, .summed_bytes = (n - 1) / n * bytes};
}

AllreduceSteps open_mpi_allreduce_steps(OpenMpiAllreduce algorithm, int ranks, double bytes, double eager_bytes) {
  if (ranks <= 1) return {};
  const int log = floor_log2(ranks);
  const double pof2 = static_cast<double>(1 << log), n = ranks;
  const bool folded = (1 << log) != ranks;  // ranks beyond the power of two are folded in and out
  // What an exchange of m bytes each way with one peer moves through the connection.
  const auto exchange = [eager_bytes](double m) { return m <= eager_bytes ? m : 2 * m; };
  switch (algorithm) {
    case OpenMpiAllreduce::RecursiveDoubling:
      // log2 p' exchanges of the whole vector; a folded rank's vector in first, the result out last.
      return {.latencies = log + (folded ? 2.0 : 0.0), .wire_bytes = log * exchange(bytes) + (folded ? 2.0 : 0.0) * bytes,
              .summed_bytes = (log + (folded ? 1.0 : 0.0)) * bytes};
    case OpenMpiAllreduce::Ring:
    case OpenMpiAllreduce::SegmentedRing: {
      AllreduceSteps s = ring_allreduce_steps(ranks, bytes);
      // Between two ranks both neighbours are the one peer: each of its 2 steps an exchange of S/2.
      if (ranks == 2) s.wire_bytes = 2 * exchange(bytes / 2);
      return s;
    }
    case OpenMpiAllreduce::Rabenseifner: {
      // Reduce-scatter by halving and allgather by doubling over p': at step k of each, an
      // exchange of S/2^k. Folding a rank in swaps halves (S/2 each way) and returns one (S/2),
      // and the whole result goes back to it at the end (S).
      AllreduceSteps s{.latencies = 2.0 * log, .summed_bytes = (pof2 - 1) / pof2 * bytes};
      for (int k = 1; k <= log; ++k) s.wire_bytes += 2 * exchange(bytes / static_cast<double>(1 << k));
      if (folded) s.latencies += 3, s.wire_bytes += exchange(bytes / 2) + 1.5 * bytes, s.summed_bytes += bytes / 2;
      return s;
    }
    case OpenMpiAllreduce::BasicLinear:
      // Every rank's vector into rank 0, summed there, and the result out to each.
      return {.latencies = 2 * (n - 1), .wire_bytes = 2 * (n - 1) * bytes, .summed_bytes = (n - 1) * bytes};
    case OpenMpiAllreduce::Nonoverlapping: {
      // A reduce and a broadcast, counted as binomial trees of the whole vector.
      const double depth = log + (folded ? 1.0 : 0.0);
      return {.latencies = 2 * depth, .wire_bytes = 2 * depth * bytes, .summed_bytes = depth * bytes};
    }
  }
  return ring_allreduce_steps(ranks, bytes);
}

std::vector<OpenMpiChoice> open_mpi_choices(int ranks, const std::vector<int64_t>& bucket_bytes) {
  std::vector<OpenMpiChoice> choices;
  for (int64_t bytes : bucket_bytes) {
    const OpenMpiAllreduce algorithm =
        open_mpi_allreduce_choice(ranks, bytes, bytes / static_cast<int64_t>(sizeof(float)));
    auto it = std::find_if(choices.begin(), choices.end(), [&](const OpenMpiChoice& c) { return c.algorithm == algorithm; });
    if (it == choices.end()) it = choices.insert(choices.end(), {.algorithm = algorithm});
    if (std::find(it->bucket_bytes.begin(), it->bucket_bytes.end(), bytes) == it->bucket_bytes.end()) {
      it->bucket_bytes.push_back(bytes);
    }
  }
  return choices;
}

}  // namespace dtbench
