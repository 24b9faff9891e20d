#include "core/tensor/param_arena.h"

#include <cmath>

#include "core/util/error.h"
#include "core/util/hash.h"
#include "core/util/rng.h"

namespace dtbench {

namespace {

// Parameters are aligned to 16 floats so each starts on a cache line (and a vector boundary).
constexpr int64_t kParamAlignment = 16;

void initialize_param(Param& param, uint64_t seed) {
  Rng rng = Rng::derive(seed, fnv1a(param.name));
  const int64_t count = param.numel();
  switch (param.init) {
    case Init::Zeros:
      std::fill_n(param.value, count, 0.0f);
      break;
    case Init::Ones:
      std::fill_n(param.value, count, 1.0f);
      break;
    case Init::KaimingNormal: {
      DTB_CHECK(param.fan_in > 0, "{} has no fan-in", param.name);
      const float stddev = std::sqrt(2.0f / static_cast<float>(param.fan_in));
      for (int64_t i = 0; i < count; ++i) param.value[i] = stddev * rng.normal();
      break;
    }
    case Init::XavierUniform: {
      DTB_CHECK(param.fan_in + param.fan_out > 0, "{} has no fan", param.name);
      const float bound = std::sqrt(6.0f / static_cast<float>(param.fan_in + param.fan_out));
      for (int64_t i = 0; i < count; ++i) param.value[i] = rng.uniform(-bound, bound);
      break;
    }
  }
}

}  // namespace

void ParamArena::bind(std::vector<Param*> params, std::shared_ptr<float[]> (*allocate)(int64_t)) {
  params_ = std::move(params);
  int64_t offset = 0;
  for (Param* param : params_) {
    param->offset = offset;
    offset += (param->numel() + kParamAlignment - 1) / kParamAlignment * kParamAlignment;
  }
  count_ = offset;
  values_ = allocate(count_);
  grads_ = allocate(count_);
  for (Param* param : params_) {
    param->value = values_.get() + param->offset;
    param->grad = grads_.get() + param->offset;
  }
}

void ParamArena::initialize(uint64_t seed) {
  std::fill_n(values_.get(), count_, 0.0f);  // the alignment padding stays zero
  for (Param* param : params_) initialize_param(*param, seed);
}

std::vector<ArenaRange> ParamArena::buckets(int64_t bucket_bytes) const {
  const int64_t bucket_count = std::max<int64_t>(bucket_bytes / static_cast<int64_t>(sizeof(float)), 1);
  std::vector<ArenaRange> result;
  int64_t end = count_;
  int64_t begin = count_;
  for (auto it = params_.rbegin(); it != params_.rend(); ++it) {
    begin = (*it)->offset;
    if (end - begin >= bucket_count) {
      result.push_back({begin, end - begin});
      end = begin;
    }
  }
  if (end > 0) result.push_back({0, end});
  return result;
}

}  // namespace dtbench
