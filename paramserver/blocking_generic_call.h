#pragma once
// Blocking calls of raw methods (grpc::ByteBuffer in and out) on gRPC's public API: a
// grpc::GenericStub call with a completion queue of its own, driven by the calling thread. Each
// step starts one operation and waits on that queue for it, which is what gRPC's synchronous API
// does inside (a queue per call that the caller polls), so the batches on the wire and the cost are
// the same; only the generic stub lets a worker send messages it built itself (wire_frames.h)
// without a protobuf copy. Every wait ends: the call's deadline fails it in gRPC, and a wait that
// outlives the deadline anyway cancels the call.
#include <memory>
#include <string>

#include <google/protobuf/message_lite.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>

namespace dtbench {

// One streaming call of `method` ("/package.Service/Method"), started at construction; its
// headers go out with its first message. Any of the four kinds of call (client, server or
// bidirectional streaming) is made this way: the server decides what the method streams.
class BlockingGenericCall {
 public:
  BlockingGenericCall(grpc::GenericStub& stub, const std::string& method, grpc::ClientContext& context);
  // Waits for nothing: every operation started was waited for.
  ~BlockingGenericCall();
  BlockingGenericCall(const BlockingGenericCall&) = delete;
  BlockingGenericCall& operator=(const BlockingGenericCall&) = delete;

  // false once the call has ended (finish() says why). With options.set_last_message() the end of
  // the request stream travels with the message.
  bool write(const grpc::ByteBuffer& message, grpc::WriteOptions options = {});
  bool writes_done();
  // false when the server sends no more (finish() says whether that was the end or a failure).
  bool read(grpc::ByteBuffer* message);
  grpc::Status finish();

 private:
  // Whether the operation tagged `tag` succeeded.
  bool wait(void* tag);

  grpc::ClientContext& context_;
  grpc::CompletionQueue queue_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> stream_;  // after queue_: goes first
};

// A unary call of `method` as one batch (headers, message, end of the request, then the answer's
// headers, message and status), waited for on a queue of its own.
grpc::Status blocking_unary_call(grpc::GenericStub& stub, const std::string& method, grpc::ClientContext& context,
                                 const grpc::ByteBuffer& request, grpc::ByteBuffer* response);

// A protobuf message as a raw message, and back (false when `buffer` does not parse as `message`).
grpc::ByteBuffer to_byte_buffer(const google::protobuf::MessageLite& message);
bool parse_byte_buffer(grpc::ByteBuffer& buffer, google::protobuf::MessageLite& message);

}  // namespace dtbench
