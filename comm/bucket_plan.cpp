#include "comm/bucket_plan.h"

#include "core/util/error.h"

namespace dtbench {

BucketPlan::BucketPlan(const ParamArena& arena, std::vector<std::vector<int>> buckets_of_param, int bucket_count)
    : buckets_of_param_(std::move(buckets_of_param)) {
  const auto& params = arena.params();
  DTB_CHECK(buckets_of_param_.size() == params.size(), "bucket plan: {} parameters' buckets given for an arena of {}",
            buckets_of_param_.size(), params.size());
  DTB_CHECK(bucket_count >= 0, "bucket plan: {} buckets", bucket_count);
  params_in_bucket_.assign(static_cast<size_t>(bucket_count), 0);
  for (size_t p = 0; p < params.size(); ++p) {
    index_of_param_[params[p]] = static_cast<int>(p);
    for (const int bucket : buckets_of_param_[p]) {
      DTB_CHECK(bucket >= 0 && bucket < bucket_count, "bucket plan: parameter {} in bucket {} of {}", p, bucket,
                bucket_count);
      ++params_in_bucket_[static_cast<size_t>(bucket)];
    }
  }
}

BucketPlan BucketPlan::contiguous(const ParamArena& arena, int64_t bucket_bytes) {
  std::vector<ArenaRange> ranges =
      bucket_bytes > 0 ? arena.buckets(bucket_bytes) : std::vector<ArenaRange>{{0, arena.count()}};
  const auto& params = arena.params();
  std::vector<std::vector<int>> buckets_of_param(params.size());
  for (size_t p = 0; p < params.size(); ++p) {
    for (size_t b = 0; b < ranges.size(); ++b) {
      if (params[p]->offset >= ranges[b].offset && params[p]->offset < ranges[b].offset + ranges[b].count) {
        buckets_of_param[p].push_back(static_cast<int>(b));
        break;
      }
    }
  }
  BucketPlan plan(arena, std::move(buckets_of_param), static_cast<int>(ranges.size()));
  plan.ranges_ = std::move(ranges);
  return plan;
}

BucketPlan BucketPlan::from_membership(const ParamArena& arena, std::vector<std::vector<int>> buckets_of_param,
                                       int bucket_count) {
  return BucketPlan(arena, std::move(buckets_of_param), bucket_count);
}

int BucketPlan::param_index(const Param& param) const {
  const auto found = index_of_param_.find(&param);
  return found == index_of_param_.end() ? -1 : found->second;
}

}  // namespace dtbench
