#pragma once
// The request half of a Push or a PushPull on the server: the worker's messages read in place
// (wire_frames.h), each checked, their slices copied once into a gradient buffer of the shard's;
// every message must repeat the first one's worker and version. Nothing reaches the values: the
// complete gradient goes to the ShardUpdater.
#include <optional>
#include <string>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>
#include <grpcpp/support/status.h>

#include "paramserver/ps_service.h"
#include "paramserver/tsan_annotations.h"
#include "paramserver/wire_frames.h"

namespace dtbench {

class GradientReader {
 public:
  explicit GradientReader(const ServiceParts& parts) : parts_(parts) {}

  // One message (cleared once read): OK, or why the push is refused.
  grpc::Status absorb(grpc::ByteBuffer& message);
  // After the last message: the complete gradient in `gradient`, or why the push is refused.
  grpc::Status take(Gradient& gradient);
  // INVALID_ARGUMENT naming the shard, the worker and the version.
  grpc::Status invalid(const std::string& problem) const;

 private:
  const ServiceParts& parts_;
  WireChunk chunk_;
  int worker_ = -1;
  int64_t version_ = 0;
  std::unique_ptr<float[]> buffer_;
  std::optional<SliceAssembler> assembler_;
};

// What the reactors of the two calls that carry a gradient (Push, PushPull) share: admission,
// reading the request stream into a GradientReader message by message, refusing a bad message,
// and telling ThreadSanitizer the order gRPC guarantees between a reactor's callbacks
// (tsan_annotations.h). The derived reactor says what happens once the whole gradient is in.
template <typename Reactor>
class GradientReadingReactor : public Reactor {
 public:
  void OnReadDone(bool ok) override {
    DTB_TSAN_ACQUIRE(this);
    if (!ok) {
      submit();
      return;
    }
    if (grpc::Status status = reader_.absorb(message_); !status.ok()) {
      refuse(status);
      return;
    }
    start_read();
  }

  void OnDone() override {
    DTB_TSAN_ACQUIRE(this);
    delete this;
  }

 protected:
  explicit GradientReadingReactor(PsService& service) : parts_(service.parts()), reader_(parts_) {}

  // The call's credentials and run checked; a refused call is finished here. The derived
  // constructor calls it, then start_read() last, once every member a callback uses is built.
  bool admitted(PsService& service, const grpc::CallbackServerContext& context) {
    grpc::Status status = service.admit(context);
    if (!status.ok()) finish(status);
    return status.ok();
  }
  // The whole gradient is in (reader_.take() gives it, or why it is refused).
  virtual void submit() = 0;

  void start_read() {
    DTB_TSAN_RELEASE(this);
    this->StartRead(&message_);
  }
  void finish(const grpc::Status& status) {
    DTB_TSAN_RELEASE(this);
    this->Finish(status);
  }
  void refuse(const grpc::Status& status) {
    ++parts_.traffic->rejected_calls;
    finish(status);
  }

  const ServiceParts& parts_;
  GradientReader reader_;
  grpc::ByteBuffer message_;  // each request message in turn
};

}  // namespace dtbench
