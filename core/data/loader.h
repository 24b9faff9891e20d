#pragma once
// Feeds one worker its shard of a data set, batch by batch, with the next batch prepared by a
// background thread while the current one trains (double buffering):
//
//   producer:  fill slot 0 | fill slot 1 | (wait: both full) ....... | fill slot 0 | ...
//   consumer:               next() -> slot 0 ............ next() -> slot 1 (slot 0 freed)
//
// Per sample: read the uint8 pixels (memory or file) -> crop/flip (augment) -> normalise with the
// given per-channel statistics -> bilinear resize (resize > 0). Which samples a rank sees, and
// their order, depend only on (seed, epoch, rank, world) (see shard.h). Cached and uncached data sets give identical batches. In steady state
// nothing is allocated per batch: the two batch buffers and the scratch images are reused.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/data/dataset.h"
#include "core/data/normalization.h"
#include "core/tensor/tensor.h"
#include "core/util/rng.h"

namespace dtbench {

struct LoaderOptions {
  int64_t batch = 0;
  int rank = 0;
  int world = 1;
  uint64_t seed = 0;
  bool shuffle = true;      // false: every world-th sample in ascending order, the same each epoch
  bool augment = false;     // random crop of the image zero-padded by 4 pixels, then flip (transforms.h)
  int64_t resize = 0;       // > 0: bilinear resize to resize x resize (e.g. 64 for AlexNet)
  bool drop_last = true;    // false: a last, smaller batch takes the rest of the shard
};

struct Batch {
  Tensor images;                 // (B, C, H, W) normalised
  std::vector<int32_t> labels;   // (B)
  std::vector<int64_t> indices;  // (B) the samples' positions in the data set
};

class Loader {
 public:
  // InputError for world < 1, rank out of range, world larger than the data set, batch < 1 or
  // larger than a shard, resize < 0, or statistics for the wrong number of channels.
  Loader(std::shared_ptr<const Dataset> data, LoaderOptions options, Normalization norm);
  // Stops the prefetch thread, also in the middle of an epoch.
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  int64_t batches_per_epoch() const { return batches_; }
  const LoaderOptions& options() const { return options_; }
  int64_t shard_size() const { return static_cast<int64_t>(shard_.size()); }
  // The samples this rank sees this epoch, in ascending order of position in the data set.
  const std::vector<int64_t>& shard() const { return shard_; }
  // (C, H, W) after resizing.
  Shape sample_shape() const { return output_shape_; }
  const Normalization& normalization() const { return norm_; }

  // Draws the shard for `epoch` and starts preparing its first batches; may be called before
  // the previous epoch was read to the end.
  void start_epoch(int64_t epoch);
  // The next batch of the epoch, waiting until it is ready; nullptr after the last one. The batch
  // stays valid until the next call. Rethrows an exception raised while preparing a batch.
  const Batch* next();

 private:
  void produce();
  void fill(Batch& batch, int64_t batch_index);

  std::shared_ptr<const Dataset> data_;
  LoaderOptions options_;
  Normalization norm_;
  std::vector<float> norm_table_;  // (C, 256), see normalization_table()
  std::vector<int64_t> shard_;
  Shape output_shape_;
  int64_t batches_ = 0;

  // Owned by the producer while it fills a batch; start_epoch changes them only while it is idle.
  std::vector<int64_t> order_;     // this epoch's sample order
  std::vector<int64_t> global_order_;  // scratch: the epoch's order of the whole set
  Rng augment_rng_{0};
  std::vector<uint8_t> raw_;       // (C, H, W) one sample as read
  std::vector<uint8_t> augmented_; // (C, H, W) after crop/flip
  std::vector<float> staging_;     // (C, H, W) normalised, before resizing
  Batch slots_[2];
  Shape slot_shapes_[2];           // (B, C, H', W'), kept to resize the images without allocating

  std::mutex mutex_;
  std::condition_variable producer_wake_;  // work to do, or stop
  std::condition_variable consumer_wake_;  // a batch is ready, the producer went idle, or an error
  bool stopping_ = false;
  bool active_ = false;      // an epoch is started
  bool busy_ = false;        // the producer is filling a slot
  bool holding_ = false;     // the consumer holds batch `released_`
  int64_t produced_ = 0;     // batches filled this epoch
  int64_t released_ = 0;     // batches the consumer is done with
  std::exception_ptr error_;
  std::thread producer_;
};

}  // namespace dtbench
