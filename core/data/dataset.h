#pragma once
// A labelled image data set: sample shape (C, H, W), class count, int32 labels, and the uint8
// pixels either cached in memory (N * C * H * W) or read from the file for each batch.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/data/record_file.h"
#include "core/tensor/tensor.h"

namespace dtbench {

// `count` consecutive samples stored as fixed-size records in `file`: sample k of the run has its
// pixels at offset_bytes + k * stride_bytes.
struct RecordRun {
  std::shared_ptr<const RecordFile> file;
  int64_t count = 0;
  int64_t offset_bytes = 0;
  int64_t stride_bytes = 0;
};

// What a format reader found; a Dataset is built from it.
struct DatasetParts {
  std::string name;                  // e.g. "cifar10 train"
  std::vector<std::string> sources;  // the files read
  Shape sample_shape;                // (C, H, W)
  int64_t classes = 0;
  std::vector<int32_t> labels;  // (N)
  std::vector<uint8_t> pixels;  // (N, C, H, W) when cached, else empty
  std::vector<RecordRun> runs;  // when not cached: where the samples lie, in sample order
};

class Dataset {
 public:
  explicit Dataset(DatasetParts parts);

  const std::string& name() const { return parts_.name; }
  const std::vector<std::string>& sources() const { return parts_.sources; }
  const Shape& sample_shape() const { return parts_.sample_shape; }
  int64_t sample_bytes() const { return sample_bytes_; }
  int64_t size() const { return static_cast<int64_t>(parts_.labels.size()); }
  int64_t classes() const { return parts_.classes; }
  const std::vector<int32_t>& labels() const { return parts_.labels; }
  bool cached() const { return parts_.runs.empty() && size() > 0; }
  // All pixels, (N, C, H, W); empty when not cached.
  std::span<const uint8_t> pixels() const { return parts_.pixels; }

  // Copies sample `index`'s pixels (sample_bytes()) to `out`: from memory, or by pread from the
  // file. Safe to call from several threads at once.
  void read_sample(int64_t index, uint8_t* out) const;

 private:
  DatasetParts parts_;
  int64_t sample_bytes_ = 0;
  std::vector<int64_t> run_starts_;  // first sample index of each run
};

}  // namespace dtbench
