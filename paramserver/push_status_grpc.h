#pragma once
// A shard's answer to a push (push_status.h) as the status of the gRPC call that carried it.
#include <grpcpp/support/status.h>

#include "paramserver/push_status.h"

namespace dtbench {

inline grpc::Status grpc_status(const PushStatus& status) {
  switch (status.error_code()) {
    case PushCode::Ok: return grpc::Status::OK;
    case PushCode::Aborted: return {grpc::StatusCode::ABORTED, status.error_message()};
    case PushCode::DeadlineExceeded: return {grpc::StatusCode::DEADLINE_EXCEEDED, status.error_message()};
    case PushCode::InvalidArgument: return {grpc::StatusCode::INVALID_ARGUMENT, status.error_message()};
    case PushCode::Unavailable: return {grpc::StatusCode::UNAVAILABLE, status.error_message()};
  }
  return {grpc::StatusCode::INTERNAL, "unknown push status: " + status.error_message()};
}

}  // namespace dtbench
