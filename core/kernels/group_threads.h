#pragma once
// Sample groups shared among the BLAS threads, each thread running a single-threaded sgemm on its
// own groups, rather than one sgemm at a time spread over the threads by OpenBLAS: the
// convolutions' products are small, and OpenBLAS's threads scale poorly on them (measured on 2
// cores with the Cooperlake kernels, ResNet-sized 64x512x576 products: 2 threads x 1-thread sgemm
// 330 GFLOP/s, one sgemm on 2 BLAS threads 146 GFLOP/s). Used by conv_gemm.cpp and
// conv_winograd.cpp.
#include <algorithm>
#include <cstdint>

#include <cblas.h>

namespace dtbench {

// While alive, OpenBLAS is held at one thread (when more than one thread shares the groups); the
// setting is restored afterwards. count() is how many threads share the groups.
class GroupThreads {
 public:
  explicit GroupThreads(int64_t groups)
      : blas_threads_(openblas_get_num_threads()),
        threads_(static_cast<int>(std::min<int64_t>(blas_threads_, groups))) {
    if (threads_ > 1) openblas_set_num_threads(1);
  }
  ~GroupThreads() {
    if (threads_ > 1) openblas_set_num_threads(blas_threads_);
  }
  GroupThreads(const GroupThreads&) = delete;
  GroupThreads& operator=(const GroupThreads&) = delete;
  int count() const { return threads_; }

  // The threads a convolution may share its groups among: OpenBLAS's setting.
  static int available() { return openblas_get_num_threads(); }

 private:
  int blas_threads_;
  int threads_;
};

}  // namespace dtbench
