#include "paramserver/ps_service.h"

#include <chrono>

#include <fmt/format.h>

#include "paramserver/gradient_reader.h"
#include "paramserver/push_pull_one.h"
#include "paramserver/push_pull_reactor.h"
#include "paramserver/push_status_grpc.h"
#include "paramserver/tsan_annotations.h"
#include "paramserver/wire_frames.h"

namespace dtbench {

namespace {

grpc::ServerUnaryReactor* finish(grpc::CallbackServerContext* context, const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

// A Fetch that waits for its name: answered when the value is published, or cancelled when the
// call's deadline passes (the worker then asks again) or the server shuts down. Exactly one of the
// store's delivery and OnCancel finds the waiter still in the store, and that one finishes the call.
class WaitingFetch final : public grpc::ServerUnaryReactor, public ControlWaiter {
 public:
  static grpc::ServerUnaryReactor* start(ControlStore& store, const std::string& name, bool erase,
                                         ps::FetchReply* reply) {
    auto* fetch = new WaitingFetch(store, reply);  // deleted in OnDone, after Finish
    DTB_TSAN_RELEASE(fetch);  // OnCancel and OnDone, on gRPC's threads, see it built
    if (auto value = store.fetch_or_wait(name, erase, fetch)) fetch->deliver(std::move(*value));
    return fetch;
  }

  void deliver(std::string value) override {
    reply_->set_found(true);
    reply_->set_value(std::move(value));
    Finish(grpc::Status::OK);
  }
  void OnCancel() override {
    DTB_TSAN_ACQUIRE(this);
    if (store_.forget(this)) Finish(grpc::Status::CANCELLED);
  }
  void OnDone() override {
    DTB_TSAN_ACQUIRE(this);
    delete this;
  }

 private:
  WaitingFetch(ControlStore& store, ps::FetchReply* reply) : store_(store), reply_(reply) {}
  ControlStore& store_;
  ps::FetchReply* reply_;
};

ps::Mode wire_mode(PsMode mode) { return mode == PsMode::Sync ? ps::SYNC : ps::ASYNC; }

grpc::ByteBuffer serialized(const google::protobuf::MessageLite& message) {
  const grpc::Slice slice(message.SerializeAsString());
  return {&slice, 1};
}

bool parse(const grpc::ByteBuffer& buffer, google::protobuf::MessageLite& message) {
  grpc::Slice whole;
  if (buffer.Length() == 0) return message.ParseFromString("");
  if (!buffer.DumpToSingleSlice(&whole).ok()) return false;
  return message.ParseFromArray(whole.begin(), static_cast<int>(whole.size()));
}

// One push: reads the worker's gradient slices into a fresh buffer, checking each, and hands the
// complete gradient to the updater; the call finishes when the updater has applied it (sync: when
// every worker's gradient of that version is in) or refused it.
class PushReactor final : public GradientReadingReactor<grpc::ServerReadReactor<grpc::ByteBuffer>> {
 public:
  PushReactor(PsService& service, grpc::CallbackServerContext& context, grpc::ByteBuffer* reply)
      : GradientReadingReactor(service), reply_(reply) {
    if (!admitted(service, context)) return;
    ++parts_.traffic->push_calls;
    start_read();
  }

 private:
  void submit() override {
    Gradient gradient;
    if (grpc::Status status = reader_.take(gradient); !status.ok()) return refuse(status);
    parts_.updater->submit(std::move(gradient), [this](const PushOutcome& outcome) {
      if (outcome.status.ok()) {
        ps::PushReply reply;
        reply.set_version(outcome.version);
        reply.set_staleness(outcome.staleness);
        *reply_ = serialized(reply);
      }
      finish(grpc_status(outcome.status));
    });
  }

  grpc::ByteBuffer* reply_;
};

// One pull: the values of one version (a snapshot shared with the other pulls of that version),
// a message at a time; always at least one message, so the version arrives even for no keys.
class PullReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  PullReactor(PsService& service, grpc::CallbackServerContext& context, const grpc::ByteBuffer& message)
      : parts_(service.parts()) {
    grpc::Status status = service.admit(context);
    ps::PullRequest request;
    if (status.ok() && !parse(message, request)) {
      status = {grpc::StatusCode::INVALID_ARGUMENT, fmt::format("shard {}: a malformed pull request", parts_.shard)};
    }
    if (status.ok()) status = parts_.roster->check_worker(request.worker());
    if (!status.ok()) {
      ++parts_.traffic->rejected_calls;
      finish(status);
      return;
    }
    ++parts_.traffic->pull_calls;
    snapshot_ = parts_.updater->snapshot();
    // The messages point into the snapshot, which each piece keeps alive until gRPC has sent it.
    writer_.emplace(*parts_.index, snapshot_->values.data(), parts_.max_message_bytes, snapshot_);
    write_next();
  }

  void OnWriteDone(bool ok) override {
    DTB_TSAN_ACQUIRE(this);
    if (!ok) {
      finish({grpc::StatusCode::CANCELLED, "the worker went away during a pull"});
      return;
    }
    write_next();
  }

  void OnDone() override {
    DTB_TSAN_ACQUIRE(this);
    delete this;
  }

 private:
  void start_write() {
    DTB_TSAN_RELEASE(this);
    StartWrite(&message_);
  }
  void finish(const grpc::Status& status) {
    DTB_TSAN_RELEASE(this);
    Finish(status);
  }

  void write_next() {
    if (writer_->done() && sent_any_) {
      finish(grpc::Status::OK);
      return;
    }
    int64_t payload_bytes = 0;
    message_ = writer_->next(kPullChunk, {{1, snapshot_->version}}, &payload_bytes);  // PullChunk.version
    parts_.traffic->bytes_out += static_cast<int64_t>(message_.Length());
    sent_any_ = true;
    start_write();
  }

  const ServiceParts& parts_;
  std::shared_ptr<const Snapshot> snapshot_;
  std::optional<FrameWriter> writer_;
  grpc::ByteBuffer message_;
  bool sent_any_ = false;
};

}  // namespace

PsService::PsService(ServiceParts parts) : parts_(std::move(parts)) {
  // Everything built before the service (placement, updater, roster) is published to gRPC's
  // threads when the server starts; every call begins in admit().
  DTB_TSAN_RELEASE(this);
}

grpc::Status PsService::admit(const grpc::CallbackServerContext& context) {
  DTB_TSAN_ACQUIRE(this);
  grpc::Status status = check_token(context, parts_.auth_token);
  if (!status.ok()) ++parts_.traffic->rejected_calls;
  return status;
}

grpc::ServerUnaryReactor* PsService::Register(grpc::CallbackServerContext* context, const ps::RegisterRequest* request,
                                              ps::RegisterReply* reply) {
  grpc::Status status = admit(*context);
  if (status.ok()) status = parts_.roster->register_worker(request->run_id(), request->worker(), request->world());
  if (!status.ok()) return finish(context, status);
  reply->set_shard(parts_.shard);
  reply->set_shard_count(parts_.shard_count);
  reply->set_mode(wire_mode(parts_.mode));
  reply->set_version(parts_.updater->version());
  for (size_t k = 0; k < parts_.index->keys.size(); ++k) {
    ps::KeyInfo* key = reply->add_keys();
    key->set_key(parts_.index->keys[k]);
    key->set_float_count(parts_.index->float_counts[k]);
  }
  reply->set_float_count(parts_.index->float_count);
  reply->set_run_id(parts_.roster->run_id());
  reply->set_optimizer(parts_.optimizer);
  return finish(context, grpc::Status::OK);
}

grpc::ServerReadReactor<grpc::ByteBuffer>* PsService::Push(grpc::CallbackServerContext* context,
                                                           grpc::ByteBuffer* reply) {
  return new PushReactor(*this, *context, reply);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* PsService::PushPull(grpc::CallbackServerContext* context) {
  return make_push_pull_reactor(*this, *context);
}

grpc::ServerUnaryReactor* PsService::PushPullOne(grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
                                                 grpc::ByteBuffer* response) {
  return serve_push_pull_one(*this, *context, *request, *response);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* PsService::Pull(grpc::CallbackServerContext* context,
                                                            const grpc::ByteBuffer* request) {
  return new PullReactor(*this, *context, *request);
}

grpc::ServerUnaryReactor* PsService::Stats(grpc::CallbackServerContext* context, const ps::StatsRequest*,
                                           ps::StatsReply* reply) {
  if (grpc::Status status = admit(*context); !status.ok()) return finish(context, status);
  const auto received = SteadyClock::now();
  reply->set_json(parts_.stats_json());
  reply->set_version(parts_.updater->version());
  // Midway, so that the time spent building the statistics falls evenly on either side.
  const auto answered = SteadyClock::now();
  const auto midway = received + (answered - received) / 2;
  reply->set_steady_clock_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(midway.time_since_epoch()).count());
  return finish(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* PsService::Checkpoint(grpc::CallbackServerContext* context, const ps::CheckpointRequest*,
                                                ps::CheckpointReply* reply) {
  if (grpc::Status status = admit(*context); !status.ok()) return finish(context, status);
  try {
    reply->set_path(parts_.checkpoint());
    reply->set_version(parts_.updater->version());
  } catch (const std::exception& error) {
    return finish(context, {grpc::StatusCode::FAILED_PRECONDITION, error.what()});
  }
  return finish(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* PsService::Shutdown(grpc::CallbackServerContext* context, const ps::ShutdownRequest* request,
                                              ps::ShutdownReply* reply) {
  if (grpc::Status status = admit(*context); !status.ok()) return finish(context, status);
  if (request->worker() < -1 || request->worker() >= parts_.roster->worker_count()) {
    return finish(context, {grpc::StatusCode::INVALID_ARGUMENT,
                            fmt::format("worker id {} is out of range: this run has workers 0..{} (-1: stop now)",
                                        request->worker(), parts_.roster->worker_count() - 1)});
  }
  reply->set_stopping(parts_.shutdown(request->worker(), request->failure()));
  return finish(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* PsService::Publish(grpc::CallbackServerContext* context, const ps::PublishRequest* request,
                                             ps::PublishReply*) {
  grpc::Status status = admit(*context);
  if (status.ok()) status = parts_.roster->check_run(request->run_id());
  if (!status.ok()) return finish(context, status);
  status = parts_.control->publish(request->name(), request->value());
  if (!status.ok()) {
    ++parts_.traffic->rejected_calls;
    status = {status.error_code(), fmt::format("shard {}: {}", parts_.shard, status.error_message())};
  }
  return finish(context, status);
}

grpc::ServerUnaryReactor* PsService::Fetch(grpc::CallbackServerContext* context, const ps::FetchRequest* request,
                                           ps::FetchReply* reply) {
  grpc::Status status = admit(*context);
  if (status.ok()) status = parts_.roster->check_run(request->run_id());
  if (!status.ok()) return finish(context, status);
  if (request->wait()) return WaitingFetch::start(*parts_.control, request->name(), request->erase(), reply);
  if (auto value = parts_.control->fetch(request->name(), request->erase())) {
    reply->set_found(true);
    reply->set_value(std::move(*value));
  }
  return finish(context, grpc::Status::OK);
}

}  // namespace dtbench
