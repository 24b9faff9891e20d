#pragma once
// Runs fn(shard) for every shard at once — shard 0 on the calling thread, the others on threads
// that live as long as the ShardThreads, so a push or pull to several servers costs no thread
// start per step — and returns the results in shard order after all have finished. The first
// shard's exception (in shard order) is rethrown once every call has ended, so no call outlives
// the buffers it was given.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace dtbench {

class ShardThreads {
 public:
  explicit ShardThreads(size_t shards);
  ~ShardThreads();
  ShardThreads(const ShardThreads&) = delete;
  ShardThreads& operator=(const ShardThreads&) = delete;

  // How many calls each run() makes (fn(0) .. fn(size() - 1)).
  int size() const { return static_cast<int>(shards_); }

  template <typename Fn>
  auto run(Fn fn) -> std::vector<decltype(fn(0))> {
    std::vector<decltype(fn(0))> results(shards_);
    std::vector<std::exception_ptr> errors(shards_);
    auto task = [&](size_t shard) {
      try {
        results[shard] = fn(static_cast<int>(shard));
      } catch (...) {
        errors[shard] = std::current_exception();
      }
    };
    dispatch([](void* context, size_t shard) { (*static_cast<decltype(task)*>(context))(shard); }, &task);
    for (const auto& error : errors) {
      if (error) std::rethrow_exception(error);
    }
    return results;
  }

 private:
  using Call = void (*)(void* context, size_t shard);
  // Runs call(context, s) for every shard s and returns when all have.
  void dispatch(Call call, void* context);
  void serve(size_t shard);

  size_t shards_;
  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable done_;
  Call call_ = nullptr;
  void* context_ = nullptr;
  uint64_t generation_ = 0;  // one per dispatch, so each thread runs each call once
  size_t pending_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace dtbench
