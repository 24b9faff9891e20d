#pragma once
// IDX files as MNIST and Fashion-MNIST ship them (LeCun et al.): a big-endian header, then bytes.
//   images: magic 0x00000803, N, H, W (uint32 each), then N * H * W pixels
//   labels: magic 0x00000801, N, then N labels
// Either file may be gzip-compressed; that is recognised by its magic bytes.
#include <cstdint>
#include <span>
#include <string>

#include "core/data/dataset.h"

namespace dtbench {

inline constexpr uint32_t kIdxImagesMagic = 0x00000803;
inline constexpr uint32_t kIdxLabelsMagic = 0x00000801;

// Reads an image file and its label file (labels must lie in 0..classes-1). With `cache` off the
// pixels stay in the file (a .gz image file is inflated once to a temporary file). InputError
// naming the file and what was expected versus found for a missing or malformed file.
DatasetParts read_idx(const std::string& images_path, const std::string& labels_path,
                      int64_t classes, bool cache);

// pixels: (count, height, width).
void write_idx_images(const std::string& path, std::span<const uint8_t> pixels, int64_t count,
                      int64_t height, int64_t width, bool gzip);
void write_idx_labels(const std::string& path, std::span<const int32_t> labels, bool gzip);

}  // namespace dtbench
