#include "core/data/loader.h"

#include <algorithm>

#include "core/data/shard.h"
#include "core/data/transforms.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

void check_options(const Dataset& data, const LoaderOptions& options, const Normalization& norm) {
  const auto channels = static_cast<size_t>(data.sample_shape()[0]);
  if (norm.mean.size() != channels || norm.stddev.size() != channels) {
    fail_input("normalisation statistics for {} channels ({} stddevs) do not fit {}, whose samples are {}",
               norm.mean.size(), norm.stddev.size(), data.name(), shape_string(data.sample_shape()));
  }
  for (float stddev : norm.stddev) {
    if (!(stddev > 0.0f)) fail_input("normalisation stddev {} must be positive", stddev);
  }
  if (options.resize < 0) fail_input("resize {} must not be negative", options.resize);
  if (options.batch < 1) fail_input("batch size {} must be at least 1", options.batch);
}

}  // namespace

Loader::Loader(std::shared_ptr<const Dataset> data, LoaderOptions options, Normalization norm)
    : data_(std::move(data)), options_(options), norm_(std::move(norm)) {
  DTB_CHECK(data_ != nullptr, "loader without a data set");
  check_options(*data_, options_, norm_);
  norm_table_ = normalization_table(norm_);
  shard_ = shard_indices(data_->size(), options_.rank, options_.world, options_.seed, 0, options_.shuffle);
  std::sort(shard_.begin(), shard_.end());
  const int64_t shard_samples = shard_size();
  if (options_.batch > shard_samples) {
    fail_input("batch size {} is larger than the shard of rank {} ({} of the {} samples of {} over {} workers)",
               options_.batch, options_.rank, shard_samples, data_->size(), data_->name(), options_.world);
  }
  batches_ = options_.drop_last ? shard_samples / options_.batch
                                : (shard_samples + options_.batch - 1) / options_.batch;

  const Shape& in = data_->sample_shape();
  output_shape_ = options_.resize > 0 ? Shape{in[0], options_.resize, options_.resize} : in;
  order_ = shard_;
  raw_.resize(static_cast<size_t>(data_->sample_bytes()));
  augmented_.resize(raw_.size());
  staging_.resize(raw_.size());
  for (int slot = 0; slot < 2; ++slot) {
    slot_shapes_[slot] = {options_.batch, output_shape_[0], output_shape_[1], output_shape_[2]};
    slots_[slot].images = Tensor(slot_shapes_[slot]);
    slots_[slot].labels.reserve(static_cast<size_t>(options_.batch));
    slots_[slot].indices.reserve(static_cast<size_t>(options_.batch));
  }
  producer_ = std::thread([this] { produce(); });
}

Loader::~Loader() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  producer_wake_.notify_all();
  producer_.join();
}

void Loader::start_epoch(int64_t epoch) {
  std::unique_lock lock(mutex_);
  active_ = false;  // the producer takes no new batch ...
  consumer_wake_.wait(lock, [&] { return !busy_; });  // ... and finishes the one it is filling
  // The epoch's global order is shared by all ranks (see shard.h), so no per-rank shuffle.
  draw_shard(data_->size(), options_.rank, options_.world, options_.seed, epoch, options_.shuffle,
             global_order_, order_);
  shard_.assign(order_.begin(), order_.end());
  std::sort(shard_.begin(), shard_.end());
  augment_rng_ = augment_rng(options_.seed, epoch, options_.rank);
  produced_ = 0;
  released_ = 0;
  holding_ = false;
  active_ = true;
  producer_wake_.notify_all();
}

const Batch* Loader::next() {
  std::unique_lock lock(mutex_);
  DTB_CHECK(active_ || error_, "Loader::next() called before start_epoch()");
  if (holding_) {
    holding_ = false;
    ++released_;
    producer_wake_.notify_all();
  }
  if (error_) std::rethrow_exception(error_);
  if (released_ >= batches_) return nullptr;
  consumer_wake_.wait(lock, [&] { return error_ || produced_ > released_; });
  if (error_) std::rethrow_exception(error_);
  holding_ = true;
  return &slots_[released_ % 2];
}

void Loader::produce() {
  std::unique_lock lock(mutex_);
  while (true) {
    producer_wake_.wait(lock, [&] {
      return stopping_ || (active_ && produced_ < batches_ && produced_ < released_ + 2);
    });
    if (stopping_) return;
    const int64_t batch_index = produced_;
    busy_ = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      fill(slots_[batch_index % 2], batch_index);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    if (error) {
      error_ = error;
      consumer_wake_.notify_all();
      return;
    }
    ++produced_;
    consumer_wake_.notify_all();
  }
}

void Loader::fill(Batch& batch, int64_t batch_index) {
  const Shape& in = data_->sample_shape();
  const int64_t channels = in[0], height = in[1], width = in[2];
  const int64_t out_sample = element_count(output_shape_);
  const int64_t first = batch_index * options_.batch;
  const int64_t count = std::min(options_.batch, shard_size() - first);
  Shape& shape = slot_shapes_[&batch - slots_];
  shape[0] = count;
  batch.images.resize(shape);
  batch.labels.resize(static_cast<size_t>(count));
  batch.indices.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t sample = order_[static_cast<size_t>(first + i)];
    batch.indices[static_cast<size_t>(i)] = sample;
    batch.labels[static_cast<size_t>(i)] = data_->labels()[static_cast<size_t>(sample)];
    data_->read_sample(sample, raw_.data());
    const uint8_t* pixels = raw_.data();
    if (options_.augment) {
      crop_flip(raw_.data(), augmented_.data(), channels, height, width, kAugmentPad,
                draw_crop_flip(augment_rng_, kAugmentPad));
      pixels = augmented_.data();
    }
    float* out = batch.images.data() + i * out_sample;
    if (options_.resize > 0) {
      normalize_image(pixels, staging_.data(), channels, height, width, norm_table_.data());
      resize_bilinear(staging_.data(), out, channels, height, width, output_shape_[1], output_shape_[2]);
    } else {
      normalize_image(pixels, out, channels, height, width, norm_table_.data());
    }
  }
}

}  // namespace dtbench
