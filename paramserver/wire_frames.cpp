#include "paramserver/wire_frames.h"

#include <cstring>

#include <fmt/format.h>

namespace dtbench {

namespace {

// Protobuf's wire types.
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;

// KeySlice's fields.
constexpr int kSliceKey = 1;
constexpr int kSliceOffset = 2;
constexpr int kSliceData = 3;

void append_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void append_tag(std::string& out, int field, int wire_type) {
  append_varint(out, static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire_type));
}

// A scalar field as proto3 writes it: left out when zero (int32 sign-extends, as int64).
void append_scalar(std::string& out, int field, int64_t value) {
  if (value == 0) return;
  append_tag(out, field, kVarint);
  append_varint(out, static_cast<uint64_t>(value));
}

// The pieces of a pinned slice each hold one of these; gRPC calls this when it lets a piece go.
void release_pin(void* pin) { delete static_cast<std::shared_ptr<const void>*>(pin); }

grpc::Slice pinned_piece(const char* data, size_t bytes, const std::shared_ptr<const void>& pin) {
  if (pin == nullptr) return {data, bytes, grpc::Slice::STATIC_SLICE};
  // gRPC's slice type has no const form; it only ever reads these bytes.
  return {const_cast<char*>(data), bytes, release_pin, new std::shared_ptr<const void>(pin)};
}

// Reads a message spread over gRPC's pieces, in place.
class Cursor {
 public:
  explicit Cursor(const std::vector<grpc::Slice>& pieces) : pieces_(pieces) { settle(); }

  size_t piece() const { return piece_; }
  size_t offset() const { return offset_; }
  int64_t position() const { return position_; }
  bool at_end() const { return piece_ >= pieces_.size(); }

  bool read_varint(uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_end()) return false;
      const auto byte = static_cast<uint8_t>(pieces_[piece_].begin()[offset_]);
      advance_one();
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;  // more than ten bytes
  }

  // false when fewer than `bytes` remain.
  bool skip(uint64_t bytes) {
    while (bytes > 0) {
      if (at_end()) return false;
      const size_t here = std::min<uint64_t>(bytes, pieces_[piece_].size() - offset_);
      offset_ += here;
      position_ += static_cast<int64_t>(here);
      bytes -= here;
      settle();
    }
    return true;
  }

 private:
  void advance_one() {
    ++offset_;
    ++position_;
    settle();
  }
  // Onto the next non-empty piece when this one is used up.
  void settle() {
    while (piece_ < pieces_.size() && offset_ >= pieces_[piece_].size()) {
      ++piece_;
      offset_ = 0;
    }
  }

  const std::vector<grpc::Slice>& pieces_;
  size_t piece_ = 0;
  size_t offset_ = 0;
  int64_t position_ = 0;
};

// Skips a field of `wire_type` whose tag was read; false when it runs past `end` or is a group.
bool skip_field(Cursor& cursor, int wire_type, int64_t end) {
  uint64_t length = 0;
  switch (wire_type) {
    case kVarint: return cursor.read_varint(length) && cursor.position() <= end;
    case kFixed64: length = 8; break;
    case kFixed32: length = 4; break;
    case kLengthDelimited:
      if (!cursor.read_varint(length)) return false;
      break;
    default: return false;  // groups (3, 4) are not in ps.proto; 6, 7 do not exist
  }
  return length <= static_cast<uint64_t>(end - cursor.position()) && cursor.skip(length);
}

// One KeySlice of `length` bytes at the cursor; its data may come before its key (any order is
// valid protobuf), so only the data's place is noted.
std::string parse_slice(Cursor& cursor, uint64_t length, WireSlice& slice) {
  const int64_t end = cursor.position() + static_cast<int64_t>(length);
  bool has_data = false;
  while (cursor.position() < end) {
    uint64_t tag = 0, value = 0;
    if (!cursor.read_varint(tag)) return "a slice's field tag is cut off";
    const int field = static_cast<int>(tag >> 3), wire_type = static_cast<int>(tag & 7);
    if (field == 0) return "a slice has a field numbered 0";
    if ((field == kSliceKey || field == kSliceOffset) && wire_type == kVarint) {
      if (!cursor.read_varint(value) || cursor.position() > end) return "a slice's key or offset is cut off";
      (field == kSliceKey ? slice.key : slice.float_offset) = static_cast<int64_t>(value);
    } else if (field == kSliceData && wire_type == kLengthDelimited) {
      if (!cursor.read_varint(value) || value > static_cast<uint64_t>(end - cursor.position())) {
        return "a slice's data runs past the slice";
      }
      if (has_data) return "a slice has two data fields";
      has_data = true;
      slice.bytes = value;
      slice.piece = cursor.piece();
      slice.offset = cursor.offset();
      cursor.skip(value);
    } else if (!skip_field(cursor, wire_type, end)) {
      return fmt::format("a slice's field {} (wire type {}) is malformed", field, wire_type);
    }
  }
  return cursor.position() == end ? "" : "a slice runs past its length";
}

}  // namespace

FrameWriter::FrameWriter(const KeyIndex& index, const float* base, int64_t max_message_bytes,
                         std::shared_ptr<const void> pin)
    : index_(index), base_(base),
      max_floats_(std::max<int64_t>(max_message_bytes / static_cast<int64_t>(sizeof(float)), 1)),
      pin_(std::move(pin)) {}

grpc::ByteBuffer FrameWriter::next(ChunkFields fields, const std::vector<std::pair<int, int64_t>>& header,
                                   int64_t* payload_bytes) {
  std::vector<grpc::Slice> pieces;
  std::string prefix;  // bytes up to the next slice's data
  for (const auto& [number, value] : header) append_scalar(prefix, number, value);
  for (int64_t room = max_floats_; !done() && room > 0;) {
    const int64_t float_count = std::min(room, index_.float_counts[key_] - offset_);
    const auto data_bytes = static_cast<uint64_t>(float_count) * sizeof(float);
    std::string fields_before_data;
    append_scalar(fields_before_data, kSliceKey, index_.keys[key_]);
    append_scalar(fields_before_data, kSliceOffset, offset_);
    append_tag(fields_before_data, kSliceData, kLengthDelimited);
    append_varint(fields_before_data, data_bytes);
    append_tag(prefix, fields.slices, kLengthDelimited);
    append_varint(prefix, fields_before_data.size() + data_bytes);
    prefix += fields_before_data;
    pieces.emplace_back(prefix);
    prefix.clear();
    const float* data = base_ + index_.offsets[key_] + offset_;
    if (data_bytes > 0) pieces.push_back(pinned_piece(reinterpret_cast<const char*>(data), data_bytes, pin_));
    *payload_bytes += static_cast<int64_t>(data_bytes);
    room -= float_count;
    offset_ += float_count;
    if (offset_ == index_.float_counts[key_]) {
      ++key_;
      offset_ = 0;
    }
  }
  if (!prefix.empty()) pieces.emplace_back(prefix);  // a header and no slices
  return {pieces.data(), pieces.size()};
}

std::string WireChunk::parse(const grpc::ByteBuffer& buffer, ChunkFields fields) {
  pieces_.clear();
  slices_.clear();
  fields_.assign(static_cast<size_t>(fields.slices), 0);
  bytes_ = static_cast<int64_t>(buffer.Length());
  if (bytes_ > 0 && !buffer.Dump(&pieces_).ok()) return "the message could not be read";
  Cursor cursor(pieces_);
  while (!cursor.at_end()) {
    uint64_t tag = 0, value = 0;
    if (!cursor.read_varint(tag)) return "a field tag is cut off";
    const int field = static_cast<int>(tag >> 3), wire_type = static_cast<int>(tag & 7);
    if (field == 0) return "a field numbered 0";
    if (field == fields.slices && wire_type == kLengthDelimited) {
      if (!cursor.read_varint(value) || value > static_cast<uint64_t>(bytes_ - cursor.position())) {
        return "a slice runs past the end of the message";
      }
      WireSlice& slice = slices_.emplace_back();
      if (std::string problem = parse_slice(cursor, value, slice); !problem.empty()) return problem;
    } else if (field >= 1 && field < fields.slices && wire_type == kVarint) {
      if (!cursor.read_varint(value)) return "a header field is cut off";
      fields_[static_cast<size_t>(field)] = static_cast<int64_t>(value);
    } else if (!skip_field(cursor, wire_type, bytes_)) {
      return fmt::format("field {} (wire type {}) is malformed", field, wire_type);
    }
  }
  return "";
}

int64_t WireChunk::field(int number) const {
  return number >= 1 && number < static_cast<int>(fields_.size()) ? fields_[static_cast<size_t>(number)] : 0;
}

void WireChunk::copy(const WireSlice& slice, char* target) const {
  size_t piece = slice.piece, offset = slice.offset, left = slice.bytes;
  while (left > 0) {
    const grpc::Slice& from = pieces_[piece];
    const size_t here = std::min(left, from.size() - offset);
    std::memcpy(target, from.begin() + offset, here);
    target += here;
    left -= here;
    ++piece;
    offset = 0;
  }
}

std::string WireChunk::absorb_into(SliceAssembler& assembler) const {
  for (const WireSlice& slice : slices_) {
    std::string problem = assembler.absorb(slice.key, slice.float_offset, slice.bytes,
                                           [&](char* target) { copy(slice, target); });
    if (!problem.empty()) return problem;
  }
  return "";
}

}  // namespace dtbench
