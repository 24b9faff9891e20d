#pragma once
// PushChunk / PullChunk (ps.proto) on the wire without protobuf copying the floats. The encoding
// is protobuf's own, byte for byte what ps.pb.h would write, so either side may still use the
// generated classes (the tests' raw client does); only the float payloads are handled apart:
//
//   sending:   a message is a grpc::ByteBuffer of small header pieces and pieces that POINT INTO
//              the floats (a worker's arena, a server's snapshot); gRPC writes them to the socket
//              from there. Each such piece holds a copy of `pin`, so the memory stays alive (and
//              the sender can wait for it to be let go) until gRPC has written it.
//   receiving: WireChunk reads a message's fields in place, in gRPC's own receive buffers, and
//              copies each slice's floats once, straight to where they belong.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include "paramserver/wire_format.h"

namespace dtbench {

// Field numbers of ps.proto's chunks: the slices field, and the scalar fields before it.
struct ChunkFields {
  int slices = 0;  // PushChunk: 3 (after worker = 1, version = 2); PullChunk: 2 (after version = 1)
};
inline constexpr ChunkFields kPushChunk{3};
inline constexpr ChunkFields kPullChunk{2};
inline constexpr ChunkFields kPushPullChunk{3};  // after version = 1, staleness = 2

// Cuts `index`'s floats at `base` into messages of about max_message_bytes, as SliceWriter does.
class FrameWriter {
 public:
  // `pin` keeps `base` alive while gRPC holds a piece of it; null when the caller guarantees that.
  FrameWriter(const KeyIndex& index, const float* base, int64_t max_message_bytes, std::shared_ptr<const void> pin);
  bool done() const { return key_ >= index_.keys.size(); }
  // The next message: the scalar fields `header` (field number -> value, in field order) and then
  // slices until about max_message_bytes of floats are in it or every key is written. Adds its
  // float payload bytes to `payload_bytes`.
  grpc::ByteBuffer next(ChunkFields fields, const std::vector<std::pair<int, int64_t>>& header, int64_t* payload_bytes);

 private:
  const KeyIndex& index_;
  const float* base_;
  int64_t max_floats_;
  std::shared_ptr<const void> pin_;
  size_t key_ = 0;
  int64_t offset_ = 0;  // inside the current key
};

// Where one slice's floats lie in a received message.
struct WireSlice {
  int64_t key = 0;
  int64_t float_offset = 0;
  size_t bytes = 0;
  size_t piece = 0;   // the first piece of the message holding them
  size_t offset = 0;  // inside that piece
};

// One received chunk, read in place.
class WireChunk {
 public:
  // "" when `buffer` is a well-formed chunk; otherwise what is wrong with it. Nothing is copied.
  std::string parse(const grpc::ByteBuffer& buffer, ChunkFields fields);
  // A scalar field before the slices field (0 when absent, as protobuf reads it).
  int64_t field(int number) const;
  const std::vector<WireSlice>& slices() const { return slices_; }
  // The message's size on the wire.
  int64_t bytes() const { return bytes_; }
  // Copies `slice`'s floats to `target` (slice.bytes bytes).
  void copy(const WireSlice& slice, char* target) const;
  // Puts every slice into `assembler`; "" or the first problem.
  std::string absorb_into(SliceAssembler& assembler) const;

 private:
  std::vector<grpc::Slice> pieces_;
  std::vector<int64_t> fields_;
  std::vector<WireSlice> slices_;
  int64_t bytes_ = 0;
};

}  // namespace dtbench
