#include "core/data/dataset.h"

#include <algorithm>
#include <cstring>

#include "core/util/error.h"

namespace dtbench {

Dataset::Dataset(DatasetParts parts) : parts_(std::move(parts)) {
  DTB_CHECK(parts_.sample_shape.size() == 3, "sample shape {} is not (C, H, W)", shape_string(parts_.sample_shape));
  sample_bytes_ = element_count(parts_.sample_shape);
  int64_t run_total = 0;
  for (const RecordRun& run : parts_.runs) {
    run_starts_.push_back(run_total);
    run_total += run.count;
  }
  if (parts_.runs.empty()) {
    DTB_CHECK(static_cast<int64_t>(parts_.pixels.size()) == size() * sample_bytes_,
              "{}: {} pixel bytes for {} samples of {}", parts_.name, parts_.pixels.size(), size(),
              shape_string(parts_.sample_shape));
  } else {
    DTB_CHECK(parts_.pixels.empty() && run_total == size(), "{}: runs hold {} samples, labels {}",
              parts_.name, run_total, size());
  }
}

void Dataset::read_sample(int64_t index, uint8_t* out) const {
  DTB_CHECK(index >= 0 && index < size(), "{}: sample {} of {}", parts_.name, index, size());
  if (parts_.runs.empty()) {
    std::memcpy(out, parts_.pixels.data() + index * sample_bytes_, static_cast<size_t>(sample_bytes_));
    return;
  }
  const auto after = std::upper_bound(run_starts_.begin(), run_starts_.end(), index);
  const size_t run_index = static_cast<size_t>(after - run_starts_.begin()) - 1;
  const RecordRun& run = parts_.runs[run_index];
  const int64_t within = index - run_starts_[run_index];
  run.file->read_at(run.offset_bytes + within * run.stride_bytes, out, sample_bytes_);
}

}  // namespace dtbench
