#include "paramserver/blocking_generic_call.h"

#include <chrono>

#include <fmt/format.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include "core/util/error.h"

namespace dtbench {

namespace {

// How long past the call's deadline a wait goes on before it cancels the call itself. gRPC fails
// the call at its deadline (DEADLINE_EXCEEDED, as the error messages say); this is only the
// guarantee that no wait outlives it by much, whatever happens to the call.
constexpr auto kDeadlineGrace = std::chrono::seconds(5);

// Waits for the one operation in flight on `queue`, tagged `tag`; whether it succeeded.
bool wait_on_queue(grpc::CompletionQueue& queue, grpc::ClientContext& context, void* tag) {
  void* got = nullptr;
  bool ok = false;
  bool event = false;
  const auto deadline = context.deadline();
  if (deadline >= std::chrono::system_clock::time_point::max() - kDeadlineGrace) {
    event = queue.Next(&got, &ok);
  } else {
    const auto status = queue.AsyncNext(&got, &ok, deadline + kDeadlineGrace);
    if (status == grpc::CompletionQueue::TIMEOUT) {
      context.TryCancel();  // the operation then ends at once, failed
      event = queue.Next(&got, &ok);
    } else {
      event = status == grpc::CompletionQueue::GOT_EVENT;
    }
  }
  if (!event || got != tag) {
    throw LogicError(fmt::format("a blocking gRPC call's queue gave {} instead of its one operation",
                                 event ? "another operation" : "nothing"));
  }
  return ok;
}

// Shuts `queue` down once nothing is in flight on it, taking what is left (nothing: every
// operation was waited for), as a completion queue must be before it is destroyed.
void drain_queue(grpc::CompletionQueue& queue) {
  queue.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) {
  }
}

// Tags of the stream's operations (one at a time; distinct, so a stray event is noticed).
enum class Op { Write, WritesDone, Read, Finish, Unary };
void* tag_of(Op op) { return reinterpret_cast<void*>(static_cast<intptr_t>(op) + 1); }

}  // namespace

BlockingGenericCall::BlockingGenericCall(grpc::GenericStub& stub, const std::string& method,
                                         grpc::ClientContext& context)
    : context_(context) {
  // Corked, StartCall sends nothing and delivers no event: the headers wait for the first write.
  context_.set_initial_metadata_corked(true);
  stream_ = stub.PrepareCall(&context_, method, &queue_);
  if (stream_ == nullptr) throw IoError(fmt::format("gRPC could not set up a call of {}", method));
  stream_->StartCall(nullptr);
}

BlockingGenericCall::~BlockingGenericCall() {
  stream_.reset();
  drain_queue(queue_);
}

bool BlockingGenericCall::write(const grpc::ByteBuffer& message, grpc::WriteOptions options) {
  stream_->Write(message, options, tag_of(Op::Write));
  return wait(tag_of(Op::Write));
}

bool BlockingGenericCall::writes_done() {
  stream_->WritesDone(tag_of(Op::WritesDone));
  return wait(tag_of(Op::WritesDone));
}

bool BlockingGenericCall::read(grpc::ByteBuffer* message) {
  stream_->Read(message, tag_of(Op::Read));
  return wait(tag_of(Op::Read));
}

grpc::Status BlockingGenericCall::finish() {
  grpc::Status status;
  stream_->Finish(&status, tag_of(Op::Finish));
  wait(tag_of(Op::Finish));  // always succeeds: the status says how the call ended
  return status;
}

bool BlockingGenericCall::wait(void* tag) { return wait_on_queue(queue_, context_, tag); }

grpc::Status blocking_unary_call(grpc::GenericStub& stub, const std::string& method, grpc::ClientContext& context,
                                 const grpc::ByteBuffer& request, grpc::ByteBuffer* response) {
  grpc::CompletionQueue queue;
  grpc::Status status;
  {
    const std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
        stub.PrepareUnaryCall(&context, method, request, &queue);
    if (call == nullptr) throw IoError(fmt::format("gRPC could not set up a call of {}", method));
    // Finish right after StartCall, before any wait: the whole call is then one batch.
    call->StartCall();
    call->Finish(response, &status, tag_of(Op::Unary));
    wait_on_queue(queue, context, tag_of(Op::Unary));
  }
  drain_queue(queue);
  return status;
}

grpc::ByteBuffer to_byte_buffer(const google::protobuf::MessageLite& message) {
  grpc::Slice slice(message.SerializeAsString());
  return {&slice, 1};
}

bool parse_byte_buffer(grpc::ByteBuffer& buffer, google::protobuf::MessageLite& message) {
  grpc::ProtoBufferReader reader(&buffer);
  return message.ParseFromZeroCopyStream(&reader);
}

}  // namespace dtbench
