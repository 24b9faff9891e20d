#pragma once
// The gRPC face of one shard, on the callback API: one small reactor per streaming call (a Push
// reads and checks slices into a fresh gradient buffer and hands the whole gradient to the
// ShardUpdater; a Pull writes one version's values, a message at a time), unary calls answered
// inline. Push and Pull are raw methods (grpc::ByteBuffer in and out, wire_frames.h): floats are
// copied once from gRPC's receive buffers into the gradient, and sent from the shared snapshot
// itself, never through protobuf strings. Every call first checks the auth token. A malformed request (unknown key, wrong length,
// wrong version, NaN / Inf, worker id out of range) is refused with INVALID_ARGUMENT before
// anything reaches the values.
#include <functional>
#include <string>

#include "paramserver/control_store.h"
#include "paramserver/ps.grpc.pb.h"
#include "paramserver/security.h"
#include "paramserver/shard_updater.h"
#include "paramserver/wire_format.h"
#include "paramserver/worker_roster.h"

namespace dtbench {

struct ServiceParts {
  int shard = 0;
  int shard_count = 1;
  PsMode mode = PsMode::Sync;
  std::string optimizer;  // optimizer_settings of the shard's optimizer, for RegisterReply
  const KeyIndex* index = nullptr;  // this shard's keys, located in the shard's own block
  ShardUpdater* updater = nullptr;
  WorkerRoster* roster = nullptr;
  ControlStore* control = nullptr;
  TrafficStats* traffic = nullptr;
  std::string auth_token;
  int64_t max_message_bytes = kDefaultMaxMessageBytes;
  std::function<std::string()> stats_json;
  // Writes a checkpoint now and returns its path (throws when it cannot).
  std::function<std::string()> checkpoint;
  // worker >= 0: that worker is done, or failed for `failure` when it is not empty; -1: stop now.
  // Returns whether the server is stopping.
  std::function<bool(int worker, const std::string& failure)> shutdown;
};

// The generated CallbackService with Push, Pull, PushPull and PushPullOne raw (PushPull has the same
// signature in both forms, so the raw one cannot be layered over the generated one: every layer is
// named).
using PsServiceBase = ps::ParameterService::WithCallbackMethod_Register<ps::ParameterService::WithRawCallbackMethod_Push<
    ps::ParameterService::WithRawCallbackMethod_Pull<ps::ParameterService::WithRawCallbackMethod_PushPull<
        ps::ParameterService::WithCallbackMethod_Stats<ps::ParameterService::WithCallbackMethod_Checkpoint<
            ps::ParameterService::WithCallbackMethod_Shutdown<ps::ParameterService::WithCallbackMethod_Publish<
                ps::ParameterService::WithCallbackMethod_Fetch<ps::ParameterService::WithRawCallbackMethod_PushPullOne<
                    ps::ParameterService::Service>>>>>>>>>>;

class PsService final : public PsServiceBase {
 public:
  explicit PsService(ServiceParts parts);

  const ServiceParts& parts() const { return parts_; }
  // The token check, counting refusals.
  grpc::Status admit(const grpc::CallbackServerContext& context);

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* context, const ps::RegisterRequest* request,
                                     ps::RegisterReply* reply) override;
  grpc::ServerReadReactor<grpc::ByteBuffer>* Push(grpc::CallbackServerContext* context,
                                                  grpc::ByteBuffer* reply) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Pull(grpc::CallbackServerContext* context,
                                                   const grpc::ByteBuffer* request) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* PushPull(grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* PushPullOne(grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Stats(grpc::CallbackServerContext* context, const ps::StatsRequest* request,
                                  ps::StatsReply* reply) override;
  grpc::ServerUnaryReactor* Checkpoint(grpc::CallbackServerContext* context, const ps::CheckpointRequest* request,
                                       ps::CheckpointReply* reply) override;
  grpc::ServerUnaryReactor* Shutdown(grpc::CallbackServerContext* context, const ps::ShutdownRequest* request,
                                     ps::ShutdownReply* reply) override;
  grpc::ServerUnaryReactor* Publish(grpc::CallbackServerContext* context, const ps::PublishRequest* request,
                                    ps::PublishReply* reply) override;
  grpc::ServerUnaryReactor* Fetch(grpc::CallbackServerContext* context, const ps::FetchRequest* request,
                                  ps::FetchReply* reply) override;

 private:
  ServiceParts parts_;
};

}  // namespace dtbench
