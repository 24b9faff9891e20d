#pragma once
// CIFAR binary files (Krizhevsky 2009): fixed-size records, no header.
//   CIFAR-10:  <label byte> <3072 pixel bytes>            data_batch_1..5.bin, test_batch.bin
//   CIFAR-100: <coarse byte> <fine byte> <3072 pixel bytes>  train.bin, test.bin
// Pixels are 3 x 32 x 32, channel planes in order R, G, B. CIFAR-100 is read with its fine
// labels (100 classes).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/data/dataset.h"

namespace dtbench {

enum class CifarKind { cifar10, cifar100 };

inline constexpr int64_t kCifarSide = 32;
inline constexpr int64_t kCifarPixelBytes = 3 * kCifarSide * kCifarSide;

int64_t cifar_classes(CifarKind kind);       // 10 or 100 (fine)
int64_t cifar_label_bytes(CifarKind kind);   // 1 or 2
int64_t cifar_record_bytes(CifarKind kind);  // label bytes + 3072

// Reads the files in order as one data set. With `cache` off the pixels stay in the files (a .gz
// file is inflated once to a temporary file). InputError naming the file and what was expected
// versus found for a missing file, a size that is not a whole number of records, or a label out
// of range.
DatasetParts read_cifar(const std::vector<std::string>& paths, CifarKind kind, bool cache);

// pixels: (labels.size(), 3, 32, 32). CIFAR-100's coarse label is written as fine / 5.
void write_cifar(const std::string& path, CifarKind kind, std::span<const uint8_t> pixels,
                 std::span<const int32_t> labels);

}  // namespace dtbench
