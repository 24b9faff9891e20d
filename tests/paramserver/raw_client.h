#pragma once
// A bare gRPC client for the tests that send what a correct worker never would: no token, a wrong
// token, unknown keys, wrong lengths, NaN.
#include <grpcpp/create_channel.h>

#include <vector>

#include "paramserver/ps.grpc.pb.h"
#include "paramserver/security.h"
#include "paramserver/wire_format.h"

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

  grpc::Status push_pull_one(const std::string& token, const ps::PushChunk& push, ps::PushPullChunk* answer = nullptr) {
    ps::PushPullChunk local;
    auto ctx = context(token);
    return stub->PushPullOne(ctx.get(), push, answer != nullptr ? answer : &local);
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

  grpc::Status checkpoint(const std::string& token) {
    ps::CheckpointReply reply;
    auto ctx = context(token);
    return stub->Checkpoint(ctx.get(), ps::CheckpointRequest(), &reply);
  }

  grpc::Status shutdown(const std::string& token, int worker) {
    ps::ShutdownRequest request;
    request.set_worker(worker);
    ps::ShutdownReply reply;
    auto ctx = context(token);
    return stub->Shutdown(ctx.get(), request, &reply);
  }

  grpc::Status publish(const std::string& token, const std::string& run_id, const std::string& name = "x",
                       const std::string& value = "y") {
    ps::PublishRequest request;
    request.set_run_id(run_id);
    request.set_name(name);
    request.set_value(value);
    ps::PublishReply reply;
    auto ctx = context(token);
    return stub->Publish(ctx.get(), request, &reply);
  }

  grpc::Status fetch(const std::string& token, const std::string& run_id, const std::string& name, bool erase,
                     ps::FetchReply* out = nullptr) {
    ps::FetchRequest request;
    request.set_run_id(run_id);
    request.set_name(name);
    request.set_erase(erase);
    ps::FetchReply reply;
    auto ctx = context(token);
    grpc::Status status = stub->Fetch(ctx.get(), request, &reply);
    if (out != nullptr) *out = reply;
    return status;
  }

  std::unique_ptr<ps::ParameterService::Stub> stub;
};

// A whole push of every key of `index`, every float equal to `value`, in messages of 64 KiB.
inline std::vector<ps::PushChunk> whole_push(const KeyIndex& index, int worker, int64_t version, float value) {
  const std::vector<float> storage(static_cast<size_t>(index.float_count), value);
  SliceWriter writer(index, storage.data(), 64 * 1024);
  std::vector<ps::PushChunk> chunks;
  while (!writer.done()) {
    ps::PushChunk chunk;
    chunk.set_worker(worker);
    chunk.set_version(version);
    writer.fill(chunk.mutable_slices());
    chunks.push_back(std::move(chunk));
  }
  return chunks;
}

// A push's messages as the one message of a PushPullOne: the first one's header, every slice.
inline ps::PushChunk one_message(const std::vector<ps::PushChunk>& chunks) {
  ps::PushChunk one;
  if (!chunks.empty()) {
    one.set_worker(chunks.front().worker());
    one.set_version(chunks.front().version());
  }
  for (const ps::PushChunk& chunk : chunks) {
    for (const ps::KeySlice& slice : chunk.slices()) *one.add_slices() = slice;
  }
  return one;
}

}  // namespace dtbench::pstest
