#pragma once
// The request half of a Push or a PushPull on the server: the worker's messages read in place
// (wire_frames.h), each checked, their slices copied once into a gradient buffer of the shard's;
// every message must repeat the first one's worker and version. Nothing reaches the values: the
// complete gradient goes to the ShardUpdater.
#include <optional>
#include <string>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>

#include "paramserver/ps_service.h"
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

}  // namespace dtbench
