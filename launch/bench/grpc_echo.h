#pragma once
// The floor a small parameter-server round stands on: a gRPC unary call that does nothing but hand
// its request back, through the same library, HTTP/2 transport and callback server the parameter
// servers use, over 127.0.0.1 in this process. A ps round of one message is one such call plus
// the server's work, so round / echo says how much of the round is ours and how much is gRPC's;
// echo / TCP round trip says what gRPC itself costs on this machine.
#include <cstdint>

namespace dtbench {

// The largest payload echoed: beyond it the call is a stream of messages, not one, and gRPC's
// per-call cost no longer shows.
constexpr int64_t kGrpcEchoMaxBytes = 1 << 20;

struct GrpcEchoResult {
  int64_t bytes = 0;  // each way
  int iterations = 0;
  double mean_seconds = 0;
  double p50_seconds = 0;
};

// Echo calls of `bytes` (1 .. kGrpcEchoMaxBytes) for about `target_ms` (3 to 1000 calls, after
// `warmup` untimed ones), on a channel of its own to a server of its own. Throws IoError when the
// server cannot start or a call fails, InputError for a size out of range.
GrpcEchoResult measure_grpc_echo(int64_t bytes, double target_ms, int warmup);

}  // namespace dtbench
