#include "core/cuda/plan/device_pick.h"

#include <fmt/format.h>

namespace dtbench::cuda_plan {

int pick_device(int local_rank, int device_count, std::string& why) {
  if (device_count <= 0) {
    why = "no CUDA device is visible to this process (check nvidia-smi and CUDA_VISIBLE_DEVICES)";
    return -1;
  }
  if (local_rank < 0) {
    why = fmt::format("local rank {} is negative", local_rank);
    return -1;
  }
  return local_rank % device_count;
}

}  // namespace dtbench::cuda_plan
