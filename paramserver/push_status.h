#pragma once
// Whether a shard took a push, and why not, in the updater's own words: the numerical core
// (shard_updater.h) knows nothing of gRPC, and the service turns this into its call's status
// (push_status_grpc.h). The names follow the gRPC codes they become.
#include <string>
#include <utility>

namespace dtbench {

enum class PushCode {
  Ok,
  Aborted,           // the shard gave up on the update this push belonged to
  DeadlineExceeded,  // the push waited for other workers longer than allowed
  InvalidArgument,   // a gradient of the wrong size, version or worker
  Unavailable,       // the shard is shutting down
};

class PushStatus {
 public:
  PushStatus() = default;
  PushStatus(PushCode code, std::string message) : code_(code), message_(std::move(message)) {}
  bool ok() const { return code_ == PushCode::Ok; }
  PushCode error_code() const { return code_; }
  const std::string& error_message() const { return message_; }

 private:
  PushCode code_ = PushCode::Ok;
  std::string message_;
};

}  // namespace dtbench
