#pragma once
// Which GPU a worker uses: `device: cuda` picks by local rank, so the ranks on one host spread over
// its GPUs (rank r on device r mod count). Plain C++, tested on the CPU.
#include <string>

namespace dtbench::cuda_plan {

// The device index for this local rank, or −1 with `why` set when none can be used.
int pick_device(int local_rank, int device_count, std::string& why);

}  // namespace dtbench::cuda_plan
