#include "launch/bench/nccl_check.h"

#include <algorithm>

namespace dtbench {

AllreduceMismatch check_nccl_sum(NcclBenchBuffer& nccl, std::span<float> host, int rank, int world) {
  const auto count = static_cast<int64_t>(host.size());
  fill_allreduce_pattern(host, rank, world);
  nccl.upload(host);
  nccl.poison_result(count);
  std::fill(host.begin(), host.end(), 0.0f);  // what comes back is the device's, not this
  nccl.sum(count);
  nccl.download(host);
  return check_allreduce_sum(host, world);
}

}  // namespace dtbench
