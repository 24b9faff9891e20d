#include "launch/bench/grpc_echo.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>

#include "core/profile/profiler.h"
#include "core/util/error.h"
#include "launch/bench/echo.grpc.pb.h"
#include "launch/bench/timed_rounds.h"
#include "paramserver/blocking_generic_call.h"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kEchoMethod = "/dtbench.bench.Echo/Call";  // echo.proto's Echo.Call

// echo.proto's one method, raw and answered on the callback server, as PushPullOne is: the
// request's slices handed back as the response, no parsing and no copy.
class EchoService final : public bench::Echo::WithRawCallbackMethod_Call<bench::Echo::Service> {
 public:
  grpc::ServerUnaryReactor* Call(grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
                                 grpc::ByteBuffer* response) override {
    *response = *request;
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

grpc::ByteBuffer payload(int64_t bytes) {
  const std::string text(static_cast<size_t>(bytes), 'x');
  grpc::Slice slice(text);
  return grpc::ByteBuffer(&slice, 1);
}

class EchoLine {
 public:
  EchoLine() {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || port == 0) throw IoError("gRPC echo probe: the echo server did not start on 127.0.0.1");
    channel_ = grpc::CreateCustomChannel(fmt::format("127.0.0.1:{}", port), grpc::InsecureChannelCredentials(),
                                         grpc::ChannelArguments());
    stub_ = std::make_unique<grpc::GenericStub>(channel_);
  }
  ~EchoLine() { server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1)); }
  EchoLine(const EchoLine&) = delete;
  EchoLine& operator=(const EchoLine&) = delete;

  // Seconds of one call of `request`, checked to come back whole.
  double call(const grpc::ByteBuffer& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::ByteBuffer answer;
    const auto start = Clock::now();
    const grpc::Status status = blocking_unary_call(*stub_, kEchoMethod, context, request, &answer);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!status.ok()) throw IoError(fmt::format("gRPC echo probe: the call failed: {}", status.error_message()));
    if (answer.Length() != request.Length()) {
      throw IoError(fmt::format("gRPC echo probe: {} bytes came back of {}", answer.Length(), request.Length()));
    }
    return seconds;
  }

 private:
  EchoService service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

}  // namespace

GrpcEchoResult measure_grpc_echo(int64_t bytes, double target_ms, int warmup) {
  if (bytes < 1 || bytes > kGrpcEchoMaxBytes) {
    throw InputError(fmt::format("gRPC echo probe: {} bytes; expected 1 to {}", bytes, kGrpcEchoMaxBytes));
  }
  EchoLine line;
  const grpc::ByteBuffer request = payload(bytes);
  double estimate = 0;
  for (int k = 0; k < std::max(warmup, 1); ++k) estimate = line.call(request);
  const int iterations = timed_rounds(target_ms, estimate);
  std::vector<double> calls;
  for (int k = 0; k < iterations; ++k) calls.push_back(line.call(request));
  GrpcEchoResult result{.bytes = bytes, .iterations = iterations};
  for (double seconds : calls) result.mean_seconds += seconds / static_cast<double>(calls.size());
  std::sort(calls.begin(), calls.end());
  result.p50_seconds = percentile(calls, 0.50);
  return result;
}

}  // namespace dtbench
