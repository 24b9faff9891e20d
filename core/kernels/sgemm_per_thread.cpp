#include "core/kernels/sgemm_per_thread.h"

#include <cblas.h>

#include <cstdint>

namespace dtbench::kernels {

void sgemm_per_thread(float* c, const float* a, const float* b, int n, int threads) {
  const int blas_threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  const int64_t matrix = int64_t{n} * n;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c + t * matrix, n);
  }
  openblas_set_num_threads(blas_threads);
}

}  // namespace dtbench::kernels
