#pragma once
// 8 floats as one GCC vector: one AVX register in the kernels' AVX clones, two SSE registers in
// the baseline ones (the project builds without -march=native; see DTB_CLONES in the .cpp files
// that use this). Loads and stores need only float alignment. Explicit vectors keep partial sums
// in registers and let strided tile data be shuffled, where GCC's own vectoriser gave up.
namespace dtbench::vec8 {

typedef float Vec8 __attribute__((vector_size(32), aligned(4)));
typedef int Index8 __attribute__((vector_size(32)));
typedef int Index8Unaligned __attribute__((vector_size(32), aligned(4)));  // for stores to int arrays

// Inlined into each clone, so that they take its instruction set (and no vector crosses a call).
#define DTB_VEC8_INLINE inline __attribute__((always_inline))

DTB_VEC8_INLINE Vec8 load(const float* at) { return *reinterpret_cast<const Vec8*>(at); }
DTB_VEC8_INLINE void store(float* at, Vec8 value) { *reinterpret_cast<Vec8*>(at) = value; }
DTB_VEC8_INLINE Vec8 broadcast(float value) { return Vec8{} + value; }
DTB_VEC8_INLINE float lane_sum(Vec8 v) {
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}
// The even-indexed and odd-indexed floats of the 16 at `at`.
DTB_VEC8_INLINE Vec8 evens(const float* at) {
  return __builtin_shuffle(load(at), load(at + 8), Index8{0, 2, 4, 6, 8, 10, 12, 14});
}
DTB_VEC8_INLINE Vec8 odds(const float* at) {
  return __builtin_shuffle(load(at), load(at + 8), Index8{1, 3, 5, 7, 9, 11, 13, 15});
}
// Stores a0 b0 a1 b1 ... a7 b7 at `at` (16 floats).
DTB_VEC8_INLINE void store_interleaved(float* at, Vec8 a, Vec8 b) {
  store(at, __builtin_shuffle(a, b, Index8{0, 8, 1, 9, 2, 10, 3, 11}));
  store(at + 8, __builtin_shuffle(a, b, Index8{4, 12, 5, 13, 6, 14, 7, 15}));
}

}  // namespace dtbench::vec8
