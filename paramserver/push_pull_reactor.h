#pragma once
// PushPull on the server: a push and the pull after it in one call. The request stream is read
// as a Push's (GradientReader); once the updater has applied the gradient (sync: once every
// worker's gradient of the version is in) the answer streams the values of exactly the version
// the update made — the update's own snapshot, pointed into, not copied — and ends with the
// status in the same write as the last message. A refused push ends the call with its status
// and no values. Saves the worker a second call, with its round trip and the server's wake-ups.
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

namespace dtbench {

class PsService;

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* make_push_pull_reactor(
    PsService& service, grpc::CallbackServerContext& context);

}  // namespace dtbench
