#pragma once
// The untimed check of `bench allreduce --transport nccl`, apart from the GPU so that it is tested
// on the CPU with stand-in buffers: each rank's input holds fill_allreduce_pattern's values, the
// result buffer is poisoned first (NaN), and after the sum every element of the result must be
// the closed-form sum over the ranks. At one rank the sum is the input, so without the poison a
// sum that did nothing (or summed in place, into the input) would pass; with it, it fails at any
// world size. What only two GPUs show: that the ranks' values are added (the sum at one rank is
// a copy).
#include <span>

#include "allreduce/allreduce_verify.h"
#include "allreduce/nccl/register.h"

namespace dtbench {

// `host` is this rank's scratch of the size checked (its content is replaced).
AllreduceMismatch check_nccl_sum(NcclBenchBuffer& nccl, std::span<float> host, int rank, int world);

}  // namespace dtbench
