#include "paramserver/for_each_shard.h"

namespace dtbench {

ShardThreads::ShardThreads(size_t shards) : shards_(shards) {
  for (size_t shard = 1; shard < shards_; ++shard) threads_.emplace_back([this, shard] { serve(shard); });
}

ShardThreads::~ShardThreads() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void ShardThreads::dispatch(Call call, void* context) {
  {
    std::lock_guard lock(mutex_);
    call_ = call;
    context_ = context;
    pending_ = threads_.size();
    ++generation_;
  }
  work_.notify_all();
  if (shards_ > 0) call(context, 0);
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
}

void ShardThreads::serve(size_t shard) {
  uint64_t seen = 0;
  for (;;) {
    Call call = nullptr;
    void* context = nullptr;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      call = call_;
      context = context_;
    }
    call(context, shard);  // never throws: run() catches into its error slots
    {
      std::lock_guard lock(mutex_);
      if (--pending_ > 0) continue;
    }
    done_.notify_one();
  }
}

}  // namespace dtbench
