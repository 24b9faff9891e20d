#include "paramserver/push_pull_one.h"

#include <algorithm>

#include "paramserver/gradient_reader.h"
#include "paramserver/ps_service.h"
#include "paramserver/push_status_grpc.h"
#include "paramserver/tsan_annotations.h"
#include "paramserver/wire_frames.h"

namespace dtbench {

namespace {

// The whole gradient from the one request message, or why the push is refused.
grpc::Status read_gradient(const ServiceParts& parts, const grpc::ByteBuffer& request, Gradient& gradient) {
  GradientReader reader(parts);
  grpc::ByteBuffer message(request);  // shares gRPC's slices: absorb() clears the buffer it reads
  grpc::Status status = reader.absorb(message);
  if (status.ok()) status = reader.take(gradient);
  return status;
}

// The values of the update's version in one PushPullChunk. They are the push's keys, so they fit
// in one message as the push did, whatever the server's own message size.
grpc::ByteBuffer answer(const ServiceParts& parts, const PushOutcome& outcome) {
  const Snapshot& snapshot = *outcome.snapshot;
  const int64_t all_bytes = std::max<int64_t>(parts.index->float_count, 1) * static_cast<int64_t>(sizeof(float));
  // The pieces point into the snapshot, which each keeps alive until gRPC has sent it.
  FrameWriter writer(*parts.index, snapshot.values.data(), all_bytes, outcome.snapshot);
  int64_t payload_bytes = 0;
  grpc::ByteBuffer message =
      writer.next(kPushPullChunk, {{1, snapshot.version}, {2, outcome.staleness}}, &payload_bytes);
  parts.traffic->bytes_out += static_cast<int64_t>(message.Length());
  return message;
}

// Lives from the handler until gRPC is done with the call. The answer may be written on another
// thread than the handler's (the one that completes the step), so the reactor tells ThreadSanitizer
// the order gRPC guarantees between Finish and OnDone (tsan_annotations.h).
class PushPullOneReactor final : public grpc::ServerUnaryReactor {
 public:
  PushPullOneReactor(PsService& service, grpc::CallbackServerContext& context, const grpc::ByteBuffer& request,
                     grpc::ByteBuffer& response)
      : parts_(service.parts()), response_(response) {
    if (grpc::Status status = service.admit(context); !status.ok()) {
      finish(status);
      return;
    }
    ++parts_.traffic->push_calls;
    ++parts_.traffic->pull_calls;
    Gradient gradient;
    if (grpc::Status status = read_gradient(parts_, request, gradient); !status.ok()) {
      ++parts_.traffic->rejected_calls;
      finish(status);
      return;
    }
    // Answered here when this push completes a small shard's step, else by the thread that does.
    parts_.updater->submit(std::move(gradient), [this](const PushOutcome& outcome) {
      if (outcome.status.ok()) response_ = answer(parts_, outcome);
      finish(grpc_status(outcome.status));
    });
  }

  void OnDone() override {
    DTB_TSAN_ACQUIRE(this);
    delete this;
  }

 private:
  void finish(const grpc::Status& status) {
    DTB_TSAN_RELEASE(this);
    Finish(status);
  }

  const ServiceParts& parts_;
  grpc::ByteBuffer& response_;
};

}  // namespace

grpc::ServerUnaryReactor* serve_push_pull_one(PsService& service, grpc::CallbackServerContext& context,
                                              const grpc::ByteBuffer& request, grpc::ByteBuffer& response) {
  return new PushPullOneReactor(service, context, request, response);
}

}  // namespace dtbench
