#include "paramserver/push_pull_reactor.h"

#include <optional>

#include "paramserver/gradient_reader.h"
#include "paramserver/ps_service.h"
#include "paramserver/push_status_grpc.h"
#include "paramserver/tsan_annotations.h"
#include "paramserver/wire_frames.h"

namespace dtbench {

namespace {

class PushPullReactor final
    : public GradientReadingReactor<grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>> {
 public:
  PushPullReactor(PsService& service, grpc::CallbackServerContext& context) : GradientReadingReactor(service) {
    if (!admitted(service, context)) return;
    ++parts_.traffic->push_calls;
    ++parts_.traffic->pull_calls;
    start_read();
  }

  void OnWriteDone(bool ok) override {
    DTB_TSAN_ACQUIRE(this);
    if (!ok) {
      finish({grpc::StatusCode::CANCELLED, "the worker went away during a push-pull's answer"});
      return;
    }
    write_next();
  }

 private:
  void submit() override {
    Gradient gradient;
    if (grpc::Status status = reader_.take(gradient); !status.ok()) return refuse(status);
    parts_.updater->submit(std::move(gradient), [this](const PushOutcome& outcome) {
      if (!outcome.status.ok()) return finish(grpc_status(outcome.status));
      snapshot_ = outcome.snapshot;
      staleness_ = outcome.staleness;
      // The messages point into the snapshot, which each piece keeps alive until gRPC has sent it.
      writer_.emplace(*parts_.index, snapshot_->values.data(), parts_.max_message_bytes, snapshot_);
      write_next();
    });
  }

  // Always at least one message, so the version arrives even for no keys; the last one carries
  // the status with it.
  void write_next() {
    int64_t payload_bytes = 0;
    message_ = writer_->next(kPushPullChunk, {{1, snapshot_->version}, {2, staleness_}}, &payload_bytes);
    parts_.traffic->bytes_out += static_cast<int64_t>(message_.Length());
    const bool last = writer_->done();
    DTB_TSAN_RELEASE(this);
    if (last) {
      StartWriteAndFinish(&message_, grpc::WriteOptions(), grpc::Status::OK);
    } else {
      StartWrite(&message_);
    }
  }

  std::shared_ptr<const Snapshot> snapshot_;
  int64_t staleness_ = 0;
  std::optional<FrameWriter> writer_;
};

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* make_push_pull_reactor(
    PsService& service, grpc::CallbackServerContext& context) {
  return new PushPullReactor(service, context);
}

}  // namespace dtbench
