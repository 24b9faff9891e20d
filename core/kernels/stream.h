#pragma once
// STREAM's copy and triad (McCalpin 1995), and an in-place triad: the memory-bandwidth probes
// behind bench ops' ceiling.
// The arrays are split into one contiguous slice per thread, and each thread should first touch
// the slice it later streams (stream_fill does), so on a NUMA machine the pages sit beside it.
#include <cstdint>

namespace dtbench::kernels {

// a (n) = value, in `threads` slices.
void stream_fill(float* a, float value, int64_t n, int threads);
// a (n) = b (n): 2 · 4 · n bytes moved (one read, one write per element).
void stream_copy(float* a, const float* b, int64_t n, int threads);
// a (n) = b (n) + scalar · c (n): 3 · 4 · n bytes moved.
void stream_triad(float* a, const float* b, const float* c, float scalar, int64_t n, int threads);
// a (n) += scalar · b (n): 3 · 4 · n bytes moved. Unlike copy and triad, which write an array they
// do not read, so that the cache first reads each written line (bytes STREAM does not count), this
// writes lines it has just read, as an optimizer step does, and reaches a higher count.
void stream_update(float* a, const float* b, float scalar, int64_t n, int threads);

}  // namespace dtbench::kernels
