#pragma once
// The two ceilings bench ops holds its operators against, measured by the same command on the
// same threads: the most sgemm reaches on square products (compute), and the most STREAM-style
// kernels reach over arrays far larger than the last-level cache (memory bandwidth). Each is the
// best the machine showed, over sizes, kernels and thread arrangements, because no single probe
// is the peak everywhere. On the 2-core AMD EPYC (Zen 5) development VM with OpenBLAS 0.3.21's
// Cooperlake kernels (pthreads build), while other jobs shared the cores: one sgemm on both
// threads ran at 250 to 400 GFLOP/s for n = 512 but often half that for n >= 1024; one sgemm per
// thread, the convolutions' arrangement, ranged from 30 to 500 GFLOP/s from run to run, and some
// convolutions outran the GEMM rows; one streaming thread often outran two; and the in-place
// update counted about 65 GB/s where triad counted 42 (kernels/stream.h says why).
#include <cstdint>
#include <vector>

namespace dtbench {

struct CeilingOptions {
  int threads = 1;
  std::vector<int64_t> gemm_sizes = {512, 1024, 2048};  // n of the n x n x n products
  // Each of STREAM's three arrays. STREAM asks for 4x the caches: 128 MiB covers a 32 MiB L3.
  int64_t stream_array_bytes = int64_t{128} << 20;
  int repetitions = 5;  // the best of these is kept, after one untimed run
};

struct GemmProbe {
  int64_t size = 0;         // n
  bool per_thread = false;  // one single-threaded sgemm per thread, else one sgemm on all threads
  double gflops = 0;        // 2n³ per sgemm / best time
};

struct StreamProbe {
  int threads = 0;
  double copy_gbps = 0;    // 2 · 4 · n bytes / best time
  double triad_gbps = 0;   // 3 · 4 · n bytes / best time
  double update_gbps = 0;  // 3 · 4 · n bytes / best time
};

struct MachineCeilings {
  int threads = 0;
  std::vector<GemmProbe> gemm;  // one per size, then one per size per thread when threads > 1
  int64_t stream_array_bytes = 0;
  std::vector<StreamProbe> stream;  // on `threads`, then on one thread when threads > 1

  // The compute ceiling in GFLOP/s and the size that reached it.
  GemmProbe best_gemm() const;
  // The memory ceiling in GB/s: the best of the three kernels on any thread count.
  double bandwidth_gbps() const;
  // Each probe's best of this and `later`, the same probes measured again: on a shared machine one
  // measurement can fall in a busy moment that the operators measured between them did not.
  void keep_best(const MachineCeilings& later);
};

MachineCeilings measure_ceilings(const CeilingOptions& options);

}  // namespace dtbench
