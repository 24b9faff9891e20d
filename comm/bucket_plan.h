#pragma once
// Which bucket each parameter's gradient belongs to, and how many parameters each bucket waits
// for. A bucket is the unit a transport communicates on its own once backward has finished every
// parameter in it: a contiguous range of the gradient arena for the allreduce transports and nccl
// (about bucket_bytes each, in reverse layer order, so the first bucket is the first backward
// finishes), or a parameter server's shard of keys (a shard's keys need not be contiguous).
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/tensor/param_arena.h"

namespace dtbench {

class BucketPlan {
 public:
  // Contiguous arena ranges of about `bucket_bytes` each in reverse layer order
  // (ParamArena::buckets), each parameter in the one range its first element lies in; 0 (or less):
  // one bucket over the whole arena.
  static BucketPlan contiguous(const ParamArena& arena, int64_t bucket_bytes);
  // `buckets_of_param[p]`: the buckets that the arena's parameter p is (wholly or partly) part of,
  // each 0 .. bucket_count - 1. A parameter may feed several buckets, or none.
  static BucketPlan from_membership(const ParamArena& arena, std::vector<std::vector<int>> buckets_of_param,
                                    int bucket_count);

  int bucket_count() const { return static_cast<int>(params_in_bucket_.size()); }
  // The ranges of a contiguous plan, by bucket; empty for a plan made from membership.
  const std::vector<ArenaRange>& ranges() const { return ranges_; }
  // The arena's index of `param`, or -1 for a parameter not in the arena.
  int param_index(const Param& param) const;
  const std::vector<int>& buckets_of(int param) const { return buckets_of_param_.at(static_cast<size_t>(param)); }
  // How many parameters the bucket waits for.
  int params_in(int bucket) const { return params_in_bucket_.at(static_cast<size_t>(bucket)); }
  const std::vector<int>& params_in_buckets() const { return params_in_bucket_; }

 private:
  BucketPlan(const ParamArena& arena, std::vector<std::vector<int>> buckets_of_param, int bucket_count);

  std::vector<ArenaRange> ranges_;
  std::unordered_map<const Param*, int> index_of_param_;
  std::vector<std::vector<int>> buckets_of_param_;  // by parameter index in the arena
  std::vector<int> params_in_bucket_;
};

}  // namespace dtbench
