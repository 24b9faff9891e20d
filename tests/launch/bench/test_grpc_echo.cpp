// The gRPC echo probe bench ps holds its small rounds against: calls come back whole, the count
// follows the time asked for within its bounds, and sizes outside one message are refused.
#include <gtest/gtest.h>

#include "core/util/error.h"
#include "launch/bench/grpc_echo.h"

namespace dtbench {
namespace {

TEST(GrpcEcho, EchoesTheSizeAskedWithinTheCallBounds) {
  for (int64_t bytes : {int64_t{1}, int64_t{4096}, kGrpcEchoMaxBytes}) {
    const GrpcEchoResult r = measure_grpc_echo(bytes, 20, 1);
    EXPECT_EQ(r.bytes, bytes);
    EXPECT_GE(r.iterations, 3);
    EXPECT_LE(r.iterations, 1000);
    EXPECT_GT(r.p50_seconds, 0.0);
    EXPECT_GT(r.mean_seconds, 0.0);
    // 20 ms asked for: the calls took about that, not the 3-call floor's worth unless each is long.
    EXPECT_LT(r.mean_seconds * r.iterations, 1.0) << bytes;
  }
}

TEST(GrpcEcho, RefusesSizesBeyondOneMessage) {
  EXPECT_THROW(measure_grpc_echo(0, 20, 1), InputError);
  EXPECT_THROW(measure_grpc_echo(kGrpcEchoMaxBytes + 1, 20, 1), InputError);
}

}  // namespace
}  // namespace dtbench
