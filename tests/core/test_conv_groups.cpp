// How the convolutions that share sample groups among threads (im2col + sgemm, Winograd) cut a
// batch: every thread gets a group of its own wherever the batch allows. With one group (small
// planes: ResNet-18's last stage, 4x4, at batch 32), im2col's products ran on OpenBLAS's own
// threads, whose worker then spun for its next call on a core the next layers' threads needed
// (ResNet-18 at batch 32 on 2 threads: 11-18 % of the step; docs/speed.md).
#include <gtest/gtest.h>

#include "core/kernels/conv_gemm.h"
#include "core/kernels/conv_winograd.h"
#include "support/conv_check.h"

namespace dtbench {
namespace {

using testing::conv_sizes;

int64_t groups_of(const ConvSizes& s, int64_t group) { return (s.batch + group - 1) / group; }

TEST(ConvGroups, EveryThreadGetsAGroupOfItsOwn) {
  const std::vector<ConvSizes> layers = {
      conv_sizes(32, 512, 4, 4, 512, 3, 1),  // ResNet-18's last stage, CIFAR input
      conv_sizes(3, 32, 4, 4, 16, 3, 1),     // a small plane, an odd batch
      conv_sizes(8, 256, 8, 8, 256, 3, 1),   // ResNet-18's third stage at the validation's batch
      conv_sizes(2, 64, 32, 32, 64, 3, 1),   // a large plane: a sample per group anyway
  };
  for (const int threads : {1, 2}) {
    const testing::BlasThreads blas(threads);
    for (const ConvSizes& s : layers) {
      SCOPED_TRACE(testing::describe(s) + ", " + std::to_string(threads) + " thread(s)");
      const int64_t wanted = std::min<int64_t>(s.batch, threads);
      EXPECT_GE(groups_of(s, conv2d_group_size(s)), wanted);
      EXPECT_GE(groups_of(s, conv2d_winograd_group_size(s)), wanted);
    }
  }
}

}  // namespace
}  // namespace dtbench
