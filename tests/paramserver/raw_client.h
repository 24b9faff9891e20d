#pragma once
// A bare gRPC client for the tests that send what a correct worker never would: no token, a wrong
// token, unknown keys, wrong lengths, NaN.
#include <grpcpp/create_channel.h>

#include "paramserver/ps.grpc.pb.h"
#include "paramserver/security.h"

namespace dtbench::pstest {

struct RawClient {
  explicit RawClient(const std::string& address,
                     std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials())
      : stub(ps::ParameterService::NewStub(grpc::CreateChannel(address, credentials))) {}

  std::unique_ptr<grpc::ClientContext> context(const std::string& token) const {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    attach_token(*context, token);
    return context;
  }

  grpc::Status register_worker(const std::string& token, int worker, int world = 1,
                               const std::string& run_id = "test-run", ps::RegisterReply* out = nullptr) {
    ps::RegisterRequest request;
    request.set_run_id(run_id);
    request.set_worker(worker);
    request.set_world(world);
    ps::RegisterReply reply;
    auto ctx = context(token);
    grpc::Status status = stub->Register(ctx.get(), request, &reply);
    if (out != nullptr) *out = reply;
    return status;
  }

  grpc::Status push(const std::string& token, const std::vector<ps::PushChunk>& chunks, ps::PushReply* reply = nullptr) {
    ps::PushReply local;
    auto ctx = context(token);
    auto writer = stub->Push(ctx.get(), reply != nullptr ? reply : &local);
    for (const auto& chunk : chunks) {
      if (!writer->Write(chunk)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }

  grpc::Status pull(const std::string& token, int worker, int64_t* version = nullptr) {
    ps::PullRequest request;
    request.set_worker(worker);
    auto ctx = context(token);
    auto reader = stub->Pull(ctx.get(), request);
    ps::PullChunk chunk;
    while (reader->Read(&chunk)) {
      if (version != nullptr) *version = chunk.version();
    }
    return reader->Finish();
  }

  grpc::Status stats(const std::string& token) {
    ps::StatsReply reply;
    auto ctx = context(token);
    return stub->Stats(ctx.get(), ps::StatsRequest(), &reply);
  }

  grpc::Status shutdown(const std::string& token, int worker) {
    ps::ShutdownRequest request;
    request.set_worker(worker);
    ps::ShutdownReply reply;
    auto ctx = context(token);
    return stub->Shutdown(ctx.get(), request, &reply);
  }

  grpc::Status publish(const std::string& token, const std::string& run_id) {
    ps::PublishRequest request;
    request.set_run_id(run_id);
    request.set_name("x");
    request.set_value("y");
    ps::PublishReply reply;
    auto ctx = context(token);
    return stub->Publish(ctx.get(), request, &reply);
  }

  std::unique_ptr<ps::ParameterService::Stub> stub;
};

}  // namespace dtbench::pstest
