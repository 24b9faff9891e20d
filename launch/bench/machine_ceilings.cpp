#include "launch/bench/machine_ceilings.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>

#include "core/kernels/sgemm_per_thread.h"
#include "core/kernels/stream.h"
#include "core/tensor/tensor.h"
#include "core/util/rng.h"

namespace dtbench {

namespace {

// One untimed run (first touch, thread start-up, caches), then the shortest of `repetitions`:
// a ceiling is what the machine can do, so the best run is the one that counts, as in STREAM.
double best_seconds(int repetitions, const std::function<void()>& body) {
  using Clock = std::chrono::steady_clock;
  body();
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repetitions; ++r) {
    const auto start = Clock::now();
    body();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

// Per thread, the threads share a and b (as the convolution's groups share the weights) and
// write their own c.
GemmProbe probe_gemm(int64_t size, bool per_thread, int threads, int repetitions) {
  const int n = static_cast<int>(size);
  const int products = per_thread ? threads : 1;
  Tensor a({n, n}), b({n, n}), c({products, n, n});
  Rng rng(31);
  for (float& x : a.span()) x = rng.uniform(-1.0f, 1.0f);
  for (float& x : b.span()) x = rng.uniform(-1.0f, 1.0f);
  const double seconds = best_seconds(repetitions, [&] {
    if (per_thread) {
      kernels::sgemm_per_thread(c.data(), a.data(), b.data(), n, threads);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(),
                  n);
    }
  });
  const double flops = 2.0 * products * n * n * static_cast<double>(n);
  return {.size = size, .per_thread = per_thread, .gflops = flops / seconds / 1e9};
}

// STREAM's arrays, left uninitialised so that stream_fill's first touch places each thread's slice.
struct StreamArrays {
  StreamArrays(int64_t count, int threads)
      : n(count),
        a(std::make_unique_for_overwrite<float[]>(count)),
        b(std::make_unique_for_overwrite<float[]>(count)),
        c(std::make_unique_for_overwrite<float[]>(count)) {
    kernels::stream_fill(a.get(), 1.0f, n, threads);
    kernels::stream_fill(b.get(), 2.0f, n, threads);
    kernels::stream_fill(c.get(), 0.5f, n, threads);
  }
  int64_t n;
  std::unique_ptr<float[]> a, b, c;
};

StreamProbe probe_stream(StreamArrays& s, int threads, int repetitions) {
  const double array_bytes = static_cast<double>(s.n) * sizeof(float);
  const double copy_seconds =
      best_seconds(repetitions, [&] { kernels::stream_copy(s.c.get(), s.a.get(), s.n, threads); });
  const double triad_seconds =
      best_seconds(repetitions, [&] { kernels::stream_triad(s.a.get(), s.b.get(), s.c.get(), 3.0f, s.n, threads); });
  const double update_seconds =
      best_seconds(repetitions, [&] { kernels::stream_update(s.a.get(), s.b.get(), 3.0f, s.n, threads); });
  return {.threads = threads,
          .copy_gbps = 2.0 * array_bytes / copy_seconds / 1e9,
          .triad_gbps = 3.0 * array_bytes / triad_seconds / 1e9,
          .update_gbps = 3.0 * array_bytes / update_seconds / 1e9};
}

}  // namespace

GemmProbe MachineCeilings::best_gemm() const {
  GemmProbe best;
  for (const GemmProbe& probe : gemm) best = probe.gflops > best.gflops ? probe : best;
  return best;
}

double MachineCeilings::bandwidth_gbps() const {
  double best = 0;
  for (const StreamProbe& probe : stream) {
    best = std::max({best, probe.copy_gbps, probe.triad_gbps, probe.update_gbps});
  }
  return best;
}

void MachineCeilings::keep_best(const MachineCeilings& later) {
  if (later.gemm.size() != gemm.size() || later.stream.size() != stream.size()) {
    throw std::logic_error("keep_best: the two measurements ran different probes");
  }
  for (size_t i = 0; i < gemm.size(); ++i) gemm[i].gflops = std::max(gemm[i].gflops, later.gemm[i].gflops);
  for (size_t i = 0; i < stream.size(); ++i) {
    stream[i].copy_gbps = std::max(stream[i].copy_gbps, later.stream[i].copy_gbps);
    stream[i].triad_gbps = std::max(stream[i].triad_gbps, later.stream[i].triad_gbps);
    stream[i].update_gbps = std::max(stream[i].update_gbps, later.stream[i].update_gbps);
  }
}

MachineCeilings measure_ceilings(const CeilingOptions& options) {
  MachineCeilings ceilings;
  ceilings.threads = options.threads;
  for (const bool per_thread : {false, true}) {
    if (per_thread && options.threads == 1) break;  // the same thing
    for (int64_t size : options.gemm_sizes) {
      ceilings.gemm.push_back(probe_gemm(size, per_thread, options.threads, options.repetitions));
    }
  }
  ceilings.stream_array_bytes = options.stream_array_bytes;
  StreamArrays arrays(options.stream_array_bytes / static_cast<int64_t>(sizeof(float)), options.threads);
  ceilings.stream.push_back(probe_stream(arrays, options.threads, options.repetitions));
  // Most memory-bound kernels here run on one thread; its bandwidth is a ceiling of its own when
  // the other threads' cores are busy.
  if (options.threads > 1) ceilings.stream.push_back(probe_stream(arrays, 1, options.repetitions));
  return ceilings;
}

}  // namespace dtbench
