#pragma once
// Runs fn(shard) for every shard at once — shard 0 on the calling thread, the others on threads of
// their own — and returns the results in shard order after all have finished. The first shard's
// exception (in shard order) is rethrown once every call has ended, so no thread outlives the
// buffers it was given.
#include <exception>
#include <thread>
#include <vector>

namespace dtbench {

template <typename Fn>
auto for_each_shard(size_t shards, Fn fn) -> std::vector<decltype(fn(0))> {
  std::vector<decltype(fn(0))> results(shards);
  std::vector<std::exception_ptr> errors(shards);
  auto run = [&](size_t shard) {
    try {
      results[shard] = fn(static_cast<int>(shard));
    } catch (...) {
      errors[shard] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (size_t shard = 1; shard < shards; ++shard) threads.emplace_back(run, shard);
  run(0);
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return results;
}

}  // namespace dtbench
