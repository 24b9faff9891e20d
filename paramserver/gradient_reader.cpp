#include "paramserver/gradient_reader.h"

#include <fmt/format.h>

namespace dtbench {

grpc::Status GradientReader::absorb(grpc::ByteBuffer& message) {
  parts_.traffic->bytes_in += static_cast<int64_t>(message.Length());
  if (std::string problem = chunk_.parse(message, kPushChunk); !problem.empty()) {
    return invalid(fmt::format("malformed message: {}", problem));
  }
  const auto worker = static_cast<int32_t>(chunk_.field(1));  // PushChunk.worker is an int32
  const int64_t version = chunk_.field(2);
  if (!assembler_) {
    worker_ = worker;
    version_ = version;
    if (grpc::Status status = parts_.roster->check_worker(worker_); !status.ok()) return status;
    buffer_ = parts_.updater->take_gradient_buffer();  // float_count floats, the shard's
    assembler_.emplace(*parts_.index, buffer_.get(), /*require_finite=*/true);
  } else if (worker != worker_ || version != version_) {
    return invalid(fmt::format("the push changed its header midway (worker {} -> {}, version {} -> {})", worker_,
                               worker, version_, version));
  }
  message.Clear();  // chunk_ holds the pieces it needs
  if (std::string problem = chunk_.absorb_into(*assembler_); !problem.empty()) return invalid(problem);
  return grpc::Status::OK;
}

grpc::Status GradientReader::take(Gradient& gradient) {
  if (!assembler_) return invalid("an empty push: no message arrived");
  if (std::string problem = assembler_->incomplete(); !problem.empty()) return invalid(problem);
  gradient = Gradient{worker_, version_, std::move(buffer_), SteadyClock::now()};
  return grpc::Status::OK;
}

grpc::Status GradientReader::invalid(const std::string& problem) const {
  return {grpc::StatusCode::INVALID_ARGUMENT,
          fmt::format("shard {}: push from worker {} at version {}: {}", parts_.shard, worker_, version_, problem)};
}

}  // namespace dtbench
