// A convolution's bias gradient (conv2d_bias_gradient, conv_gemm.h), which every algorithm shares,
// against an independent sum in double precision: planes whose size leaves every remainder of the
// kernel's blocks of 32 and vectors of 8 (1, 7, 8, 31, 32, 33, 100, 784 floats), batches of 1 to 9.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/kernels/conv_gemm.h"
#include "core/util/rng.h"
#include "support/conv_check.h"

namespace dtbench {
namespace {

TEST(ConvBiasGradient, SumsEveryChannelOverBatchAndPlane) {
  Rng rng(2024);
  for (const int64_t side : {1, 7, 8, 31, 32, 33, 100, 784}) {
    for (const int64_t batch : {1, 3, 9}) {
      // A 1 x side plane: the kernel sees only P = out_height * out_width.
      ConvSizes s = testing::conv_sizes(batch, 1, 1, side, 5, 1, 0);
      SCOPED_TRACE(testing::describe(s));
      const int64_t P = s.out_plane(), C = s.out_channels;
      std::vector<float> dout(static_cast<size_t>(batch * C * P));
      for (float& v : dout) v = rng.uniform(-1.0f, 1.0f);
      std::vector<float> dbias(static_cast<size_t>(C), -7.0f);
      conv2d_bias_gradient(dbias.data(), dout.data(), s);
      for (int64_t c = 0; c < C; ++c) {
        double sum = 0.0, magnitude = 0.0;
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t p = 0; p < P; ++p) {
            const double v = dout[static_cast<size_t>((b * C + c) * P + p)];
            sum += v;
            magnitude += std::abs(v);
          }
        }
        // fp32 sums of n terms: within n · 2^-24 of the terms' magnitude (each addition rounds once).
        const double bound = static_cast<double>(batch * P) * 0x1.0p-24 * magnitude + 1e-30;
        EXPECT_NEAR(dbias[static_cast<size_t>(c)], sum, bound) << "channel " << c;
      }
    }
  }
}

}  // namespace
}  // namespace dtbench
