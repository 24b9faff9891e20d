#include "comm/bucket_pipeline.h"

#include "core/util/error.h"

namespace dtbench {

using Clock = std::chrono::steady_clock;

BucketPipeline::BucketPipeline(BucketPlan plan, Handler communicate, Handler prepare, int lanes)
    : plan_(std::move(plan)), communicate_(std::move(communicate)), prepare_(std::move(prepare)) {
  DTB_CHECK(communicate_ != nullptr, "bucket pipeline without a communicate handler");
  DTB_CHECK(lanes >= 1, "bucket pipeline with {} lanes; expected at least 1", lanes);
  pending_ = plan_.params_in_buckets();
  for (size_t b = 0; b < pending_.size(); ++b) {
    if (pending_[b] == 0) empty_.push_back(static_cast<int>(b));
  }
  done_.reserve(static_cast<size_t>(plan_.bucket_count()));
  for (int lane = 0; lane < lanes; ++lane) threads_.emplace_back([this] { run(); });
}

BucketPipeline::~BucketPipeline() { stop(); }

void BucketPipeline::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  work_done_.notify_all();
  for (std::thread& thread : threads_) {
    if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) thread.join();
  }
}

void BucketPipeline::gradient_ready(const Param& param) {
  const int index = plan_.param_index(param);
  if (index >= 0) gradient_ready(index);
}

void BucketPipeline::gradient_ready(int param) {
  for (const int bucket : plan_.buckets_of(param)) {
    // Exactly at zero: a count driven below it (a parameter reported twice) queues nothing more.
    if (--pending_[static_cast<size_t>(bucket)] != 0) continue;
    const auto ready = Clock::now();
    if (prepare_) prepare_(bucket);
    {
      std::lock_guard lock(mutex_);
      queue_.push_back({.bucket = bucket, .ready = ready, .start = {}, .end = {}});
    }
    work_ready_.notify_one();
  }
}

void BucketPipeline::run() {
  for (;;) {
    BucketTimes times;
    bool skip = false;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      times = queue_.front();
      queue_.pop_front();
      skip = error_ != nullptr;
    }
    times.start = Clock::now();
    std::exception_ptr error;
    if (!skip) {
      try {
        communicate_(times.bucket);
      } catch (...) {
        error = std::current_exception();
      }
    }
    times.end = Clock::now();
    {
      // wait_all reads done_ only once the step's last bucket is in it, under this lock.
      std::lock_guard lock(mutex_);
      if (error && !error_) error_ = error;
      done_.push_back(times);
    }
    work_done_.notify_all();
  }
}

std::span<const BucketTimes> BucketPipeline::wait_all() {
  // A bucket that holds no parameter (a server shard that got no key) is never readied by
  // backward; it goes now, so the step still communicates every bucket (its server's version moves).
  for (const int bucket : empty_) {
    const auto ready = Clock::now();
    if (prepare_) prepare_(bucket);
    {
      std::lock_guard lock(mutex_);
      queue_.push_back({.bucket = bucket, .ready = ready, .start = {}, .end = {}});
    }
    work_ready_.notify_one();
  }
  std::unique_lock lock(mutex_);
  const size_t buckets = static_cast<size_t>(plan_.bucket_count());
  work_done_.wait(lock, [&] { return stopping_ || done_.size() == buckets; });
  if (done_.size() != buckets) {
    throw IoError(fmt::format("bucket pipeline stopped with {} of {} buckets of the step not communicated",
                              buckets - done_.size(), buckets));
  }
  if (error_) std::rethrow_exception(error_);
  // Every bucket of the step is done, so backward (which only starts again after this returns)
  // and the communication threads (idle until the next bucket) leave these alone.
  pending_ = plan_.params_in_buckets();
  taken_.swap(done_);
  done_.clear();
  return taken_;
}

}  // namespace dtbench
