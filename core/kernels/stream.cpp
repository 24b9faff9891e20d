#include "core/kernels/stream.h"

namespace dtbench::kernels {

// schedule(static) without a chunk gives every thread one contiguous slice, the same slice in
// every loop below for the same n and thread count: the first touch in stream_fill decides where
// each slice's pages live, and the timed loops then stream the slices their own threads touched.

void stream_fill(float* a, float value, int64_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = value;
}

void stream_copy(float* a, const float* b, int64_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i];
}

void stream_triad(float* a, const float* b, const float* c, float scalar, int64_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];
}

void stream_update(float* a, const float* b, float scalar, int64_t n, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] += scalar * b[i];
}

}  // namespace dtbench::kernels
