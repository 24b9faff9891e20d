// Pushes and pulls on the wire without protobuf strings (wire_frames.h): what FrameWriter sends is
// byte for byte what protobuf writes for the same slices, WireChunk reads protobuf's bytes however
// gRPC cut them into pieces (a varint or a float split between two pieces, a slice boundary in
// the middle of a key, an odd size), refuses what is malformed, and the memory a message points
// into is let go only when gRPC lets go of the message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "paramserver/wire_frames.h"

namespace dtbench {
namespace {

// Keys of odd lengths, back to back in one buffer: 1001, 3, 2500 and 1 floats.
KeyIndex odd_index() {
  KeyIndex index;
  const std::vector<int64_t> counts = {1001, 3, 2500, 1};
  int64_t offset = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t id = static_cast<int64_t>(k) * 7 + 2;  // ids are not positions
    index.position[id] = k;
    index.keys.push_back(id);
    index.float_counts.push_back(counts[k]);
    index.offsets.push_back(offset);
    offset += counts[k];
    index.float_count += counts[k];
  }
  return index;
}

std::vector<float> distinct_floats(int64_t count) {
  std::vector<float> values(static_cast<size_t>(count));
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * static_cast<float>(i) - 1e3f + 1.0f / (1.0f + i);
  return values;
}

std::string bytes_of(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> pieces;
  EXPECT_TRUE(buffer.Dump(&pieces).ok());
  std::string all;
  for (const grpc::Slice& piece : pieces) all.append(reinterpret_cast<const char*>(piece.begin()), piece.size());
  return all;
}

// `bytes` as gRPC might hand it over: in pieces of `piece` bytes (the last shorter).
grpc::ByteBuffer in_pieces(const std::string& bytes, size_t piece) {
  std::vector<grpc::Slice> pieces;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    pieces.emplace_back(bytes.data() + at, std::min(piece, bytes.size() - at));
  }
  return {pieces.data(), pieces.size()};
}

TEST(WireFrames, PushMessagesAreProtobufsOwnBytes) {
  const KeyIndex index = odd_index();
  const std::vector<float> grads = distinct_floats(index.float_count);
  // 5000 bytes: 1250 floats per message, so slices end in the middle of keys 0 and 2.
  FrameWriter frames(index, grads.data(), 5000, nullptr);
  SliceWriter reference(index, grads.data(), 5000);
  int messages = 0;
  int64_t payload = 0;
  while (!frames.done()) {
    const grpc::ByteBuffer message = frames.next(kPushChunk, {{1, 3}, {2, 41}}, &payload);
    ps::PushChunk expected;
    expected.set_worker(3);
    expected.set_version(41);
    reference.fill(expected.mutable_slices());
    EXPECT_EQ(bytes_of(message), expected.SerializeAsString()) << "message " << messages;
    ++messages;
  }
  EXPECT_TRUE(reference.done());
  EXPECT_EQ(messages, 3);  // 3505 floats, 1250 a message
  EXPECT_EQ(payload, index.float_count * 4);
}

TEST(WireFrames, APullOfNoKeysIsItsHeaderAlone) {
  const KeyIndex empty;
  FrameWriter frames(empty, nullptr, 5000, nullptr);
  int64_t payload = 0;
  ps::PullChunk expected;
  expected.set_version(-5);  // negative: ten bytes of varint, as protobuf writes it
  EXPECT_EQ(bytes_of(frames.next(kPullChunk, {{1, -5}}, &payload)), expected.SerializeAsString());
  EXPECT_TRUE(frames.done());
}

TEST(WireFrames, ChunksCutAnywhereReassembleBitForBit) {
  const KeyIndex index = odd_index();
  std::vector<float> values = distinct_floats(index.float_count);
  values[1500] = -0.0f;  // bits, not values, must arrive
  values[7] = std::numeric_limits<float>::denorm_min();
  SliceWriter writer(index, values.data(), 3000);
  std::vector<std::string> messages;
  while (!writer.done()) {
    ps::PullChunk chunk;
    chunk.set_version(9);
    writer.fill(chunk.mutable_slices());
    messages.push_back(chunk.SerializeAsString());
  }
  for (size_t piece : {size_t{1}, size_t{3}, size_t{7}, size_t{4096}, size_t{1} << 20}) {
    std::vector<float> got(values.size(), 123.0f);
    SliceAssembler assembler(index, got.data(), /*require_finite=*/true);
    for (const std::string& message : messages) {
      WireChunk chunk;
      ASSERT_EQ(chunk.parse(in_pieces(message, piece), kPullChunk), "") << "pieces of " << piece;
      EXPECT_EQ(chunk.field(1), 9);
      EXPECT_EQ(chunk.bytes(), static_cast<int64_t>(message.size()));
      ASSERT_EQ(chunk.absorb_into(assembler), "");
    }
    EXPECT_EQ(assembler.incomplete(), "");
    EXPECT_EQ(std::memcmp(got.data(), values.data(), values.size() * sizeof(float)), 0) << "pieces of " << piece;
  }
}

TEST(WireFrames, ReadsFieldsInAnyOrderAndSkipsUnknownOnes) {
  // KeySlice{data, float_offset = 2, key = 9} with an unknown field 15 before it; PushChunk's
  // version after its slices.
  const float floats[2] = {1.5f, -2.25f};
  std::string slice;
  slice += '\x1a';  // field 3 (data), length-delimited
  slice += '\x08';
  slice.append(reinterpret_cast<const char*>(floats), 8);
  slice += "\x10\x02\x08\x09";  // float_offset = 2, key = 9
  std::string message = "\x78\x05";  // field 15, varint 5: unknown
  message += "\x08\x01";             // worker = 1
  message += '\x1a';
  message += static_cast<char>(slice.size());
  message += slice;
  message += "\x10\x2a";  // version = 42
  WireChunk chunk;
  ASSERT_EQ(chunk.parse(in_pieces(message, 5), kPushChunk), "");
  EXPECT_EQ(chunk.field(1), 1);
  EXPECT_EQ(chunk.field(2), 42);
  ASSERT_EQ(chunk.slices().size(), 1u);
  EXPECT_EQ(chunk.slices()[0].key, 9);
  EXPECT_EQ(chunk.slices()[0].float_offset, 2);
  float got[2] = {};
  chunk.copy(chunk.slices()[0], reinterpret_cast<char*>(got));
  EXPECT_EQ(got[0], 1.5f);
  EXPECT_EQ(got[1], -2.25f);
}

TEST(WireFrames, RefusesMalformedMessages) {
  const KeyIndex index = odd_index();
  const std::vector<float> values = distinct_floats(index.float_count);
  SliceWriter writer(index, values.data(), 100);
  ps::PushChunk chunk;
  chunk.set_worker(1);
  writer.fill(chunk.mutable_slices());
  const std::string good = chunk.SerializeAsString();
  WireChunk parsed;
  ASSERT_EQ(parsed.parse(in_pieces(good, 64), kPushChunk), "");
  for (size_t cut : {good.size() - 1, good.size() - 50, size_t{3}}) {  // cut off in data, a slice, a tag
    EXPECT_NE(parsed.parse(in_pieces(good.substr(0, cut), 64), kPushChunk), "") << "cut at " << cut;
  }
  EXPECT_NE(parsed.parse(in_pieces("\x0b\x0c", 1), kPushChunk), "");  // a group
  EXPECT_NE(parsed.parse(in_pieces(std::string("\x00\x01", 2), 1), kPushChunk), "");  // field 0
  EXPECT_NE(parsed.parse(in_pieces("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 4), kPushChunk), "");
  // A slice claiming more bytes than its message has.
  EXPECT_NE(parsed.parse(in_pieces("\x1a\x7f\x08\x01", 2), kPushChunk), "");
  // A slice whose data runs past the slice.
  EXPECT_NE(parsed.parse(in_pieces(std::string("\x1a\x03\x1a\x05\x00\x00\x00\x00\x00", 9), 2), kPushChunk), "");
}

TEST(WireFrames, TheAssemblerStillRefusesWhatDoesNotFit) {
  const KeyIndex index = odd_index();
  std::vector<float> values = distinct_floats(index.float_count);
  values[1001 + 3 + 17] = std::numeric_limits<float>::quiet_NaN();  // key 16 (the third), float 17
  std::vector<float> got(values.size());
  SliceAssembler assembler(index, got.data(), /*require_finite=*/true);
  FrameWriter frames(index, values.data(), 1 << 20, nullptr);
  int64_t payload = 0;
  WireChunk chunk;
  ASSERT_EQ(chunk.parse(frames.next(kPushChunk, {}, &payload), kPushChunk), "");
  const std::string problem = chunk.absorb_into(assembler);
  EXPECT_NE(problem.find("key 16: non-finite value nan at float 17"), std::string::npos) << problem;
}

TEST(WireFrames, PinnedMemoryIsLetGoWithTheLastMessage) {
  const KeyIndex index = odd_index();
  auto values = std::make_shared<std::vector<float>>(distinct_floats(index.float_count));
  std::weak_ptr<std::vector<float>> watch = values;
  std::optional<grpc::ByteBuffer> first, second;
  {
    FrameWriter frames(index, values->data(), 8000, values);
    values.reset();
    int64_t payload = 0;
    first = frames.next(kPullChunk, {{1, 1}}, &payload);
    second = frames.next(kPullChunk, {{1, 1}}, &payload);
  }
  EXPECT_FALSE(watch.expired());  // the messages point into it
  const std::string copied = bytes_of(*second);
  first.reset();
  EXPECT_FALSE(watch.expired());
  second.reset();
  EXPECT_TRUE(watch.expired());
  WireChunk chunk;  // and what the second message held was the floats themselves
  ASSERT_EQ(chunk.parse(in_pieces(copied, 999), kPullChunk), "");
  ASSERT_FALSE(chunk.slices().empty());
  EXPECT_EQ(chunk.slices()[0].key, 16);
  EXPECT_EQ(chunk.slices()[0].float_offset, 2000 - 1001 - 3);
}

}  // namespace
}  // namespace dtbench
