#pragma once
// L floats as one GCC vector, for kernels written once for several vector widths: 8 (one AVX
// register, two SSE ones in the baseline clones) and 16 (one AVX-512 register, in code compiled
// for AVX-512F only and called only where the CPU has it). Loads and stores need only float
// alignment. Everything here is inlined into the caller, so that it takes the caller's
// instruction set and no vector crosses a call (see vec8.h).
#include "core/kernels/vec8.h"

namespace dtbench::lanes {

template <int L>
struct VectorOf;
template <>
struct VectorOf<8> {
  typedef float type __attribute__((vector_size(32), aligned(4)));
};
template <>
struct VectorOf<16> {
  typedef float type __attribute__((vector_size(64), aligned(4)));
};
template <int L>
using Vec = typename VectorOf<L>::type;

template <int L>
DTB_VEC8_INLINE Vec<L> load(const float* at) {
  return *reinterpret_cast<const Vec<L>*>(at);
}
template <int L>
DTB_VEC8_INLINE void store(float* at, Vec<L> value) {
  *reinterpret_cast<Vec<L>*>(at) = value;
}
template <int L>
DTB_VEC8_INLINE Vec<L> broadcast(float value) {
  return Vec<L>{} + value;
}
// Eight lanes from `first` summed pairwise: ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7)), the
// order of vec8::lane_sum.
template <int L>
DTB_VEC8_INLINE float sum_of_eight(Vec<L> v, int first) {
  return ((v[first] + v[first + 1]) + (v[first + 2] + v[first + 3])) +
         ((v[first + 4] + v[first + 5]) + (v[first + 6] + v[first + 7]));
}
// Every lane summed, eight at a time and then the eights.
template <int L>
DTB_VEC8_INLINE float lane_sum(Vec<L> v) {
  if constexpr (L == 8) {
    return sum_of_eight<L>(v, 0);
  } else {
    static_assert(L == 16);
    return sum_of_eight<L>(v, 0) + sum_of_eight<L>(v, 8);
  }
}

}  // namespace dtbench::lanes
