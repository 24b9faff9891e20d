#pragma once
// The zero-bordered copy of one plane that Winograd's tiles read their windows from and gather
// their input gradients into, so that no window needs a bounds check: shared by F(2x2, 3x3)
// (winograd_tiles.cpp) and F(4x4, 3x3) (winograd4_tiles.cpp).
#include <algorithm>
#include <cstdint>
#include <vector>

namespace dtbench::winograd {

struct PaddedPlane {
  std::vector<float> values;
  int64_t width = 0;
  float* row(int64_t r) { return values.data() + r * width; }
};

// This thread's plane of rows × width floats, zeroed, and `slack` more (for vector loads that
// read a little past the last window).
inline PaddedPlane& zeroed_plane(int64_t rows, int64_t width, int64_t slack = 0) {
  thread_local PaddedPlane plane;
  plane.width = width;
  plane.values.assign(static_cast<size_t>(rows * width + slack), 0.0f);
  return plane;
}

// plane (H, W) into padded at (pad, pad); the border keeps what it holds (zeros).
inline void copy_into(PaddedPlane& padded, const float* plane, int64_t H, int64_t W, int64_t pad) {
  for (int64_t ih = 0; ih < H; ++ih) std::copy_n(plane + ih * W, W, padded.row(ih + pad) + pad);
}

// plane (H, W) from padded at (pad, pad), the border dropped.
inline void copy_out_of(PaddedPlane& padded, float* plane, int64_t H, int64_t W, int64_t pad) {
  for (int64_t ih = 0; ih < H; ++ih) std::copy_n(padded.row(ih + pad) + pad, W, plane + ih * W);
}

}  // namespace dtbench::winograd
