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
  using type = vec8::Vec8;
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
// Every lane summed, in vec8::lane_sum's order eight at a time, then the eights.
template <int L>
DTB_VEC8_INLINE float lane_sum(Vec<L> v) {
  if constexpr (L == 8) {
    return vec8::lane_sum(v);
  } else {
    static_assert(L == 16);
    const float* lanes = reinterpret_cast<const float*>(&v);
    return vec8::lane_sum(vec8::load(lanes)) + vec8::lane_sum(vec8::load(lanes + 8));
  }
}

}  // namespace dtbench::lanes
