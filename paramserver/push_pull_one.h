#pragma once
// PushPullOne on the server: a push of one message and its answer as one unary call. The request
// is read as a Push's single message (GradientReader) and handed to the updater; once the
// gradient is applied (sync: once the step is) the answer is one message with the values of
// exactly the version the update made — the update's own snapshot, pointed into, not copied — and
// the status. A refused push ends the call with its status and no values. Against PushPull's
// stream this is one handler instead of one callback per read and write: on a small shard, where
// the update is made inline, the thread that reads the step's last push also answers every push.
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

namespace dtbench {

class PsService;

grpc::ServerUnaryReactor* serve_push_pull_one(PsService& service, grpc::CallbackServerContext& context,
                                              const grpc::ByteBuffer& request, grpc::ByteBuffer& response);

}  // namespace dtbench
