// Blocking calls on gRPC's generic stub against a generic callback server on loopback: messages of
// a stream and of a unary call come back whole and in order, and every wait ends — at the call's
// deadline, or at once when another thread cancels the call — with the status that says which.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "paramserver/blocking_generic_call.h"
#include "paramserver/ps.pb.h"
#include "paramserver/tsan_annotations.h"

namespace dtbench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kEcho = "/test.Generic/Echo";      // answers each message with itself
constexpr const char* kSilent = "/test.Generic/Silent";  // reads, never answers, ends only when cancelled

class ServerReactor final : public grpc::ServerGenericBidiReactor {
 public:
  explicit ServerReactor(const std::string& method) : echo_(method == kEcho) {
    DTB_TSAN_RELEASE(this);  // the callbacks, on gRPC's threads, see the reactor built
    if (echo_ || method == kSilent) {
      StartRead(&message_);
    } else {
      finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no such method"));
    }
  }
  void OnReadDone(bool ok) override {
    DTB_TSAN_ACQUIRE(this);
    if (!ok) {
      if (echo_) finish(grpc::Status::OK);
      return;  // silent: the cancel finishes it
    }
    if (echo_) return StartWrite(&message_);
    StartRead(&message_);
  }
  void OnWriteDone(bool ok) override {
    DTB_TSAN_ACQUIRE(this);
    if (ok) StartRead(&message_);
  }
  void OnCancel() override {
    DTB_TSAN_ACQUIRE(this);
    finish(grpc::Status::CANCELLED);
  }
  void OnDone() override {
    DTB_TSAN_ACQUIRE(this);
    delete this;
  }

 private:
  // A cancel may come while the reads end: the call is finished once.
  void finish(const grpc::Status& status) {
    if (!finished_.exchange(true)) Finish(status);
  }

  std::atomic<bool> finished_{false};
  bool echo_;
  grpc::ByteBuffer message_;
};

class Service final : public grpc::CallbackGenericService {
 public:
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* context) override {
    return new ServerReactor(context->method());
  }
};

grpc::ByteBuffer text(const std::string& value) {
  grpc::Slice slice(value);
  return {&slice, 1};
}

std::string text_of(const grpc::ByteBuffer& buffer) {
  grpc::Slice whole;
  EXPECT_TRUE(buffer.DumpToSingleSlice(&whole).ok());
  return {reinterpret_cast<const char*>(whole.begin()), whole.size()};
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

class BlockingGenericCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterCallbackGenericService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = std::make_unique<grpc::GenericStub>(
        grpc::CreateChannel(fmt::format("127.0.0.1:{}", port), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override { server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1)); }

  static void set_deadline(grpc::ClientContext& context, double seconds) {
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             std::chrono::duration<double>(seconds)));
  }

  Service service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

TEST_F(BlockingGenericCallTest, AStreamsMessagesComeBackInOrderAndItEndsWithItsStatus) {
  grpc::ClientContext context;
  set_deadline(context, 10);
  BlockingGenericCall call(*stub_, kEcho, context);
  for (int k = 0; k < 3; ++k) {
    grpc::WriteOptions options;
    if (k == 2) options.set_last_message();  // the end of the requests with the last one
    ASSERT_TRUE(call.write(text(fmt::format("message {}", k)), options));
    grpc::ByteBuffer answer;
    ASSERT_TRUE(call.read(&answer));
    EXPECT_EQ(text_of(answer), fmt::format("message {}", k));
  }
  grpc::ByteBuffer none;
  EXPECT_FALSE(call.read(&none));
  const grpc::Status status = call.finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(BlockingGenericCallTest, AUnaryCallIsAnsweredAndAnUnknownMethodRefused) {
  grpc::ClientContext context;
  set_deadline(context, 10);
  grpc::ByteBuffer answer;
  const grpc::Status status = blocking_unary_call(*stub_, kEcho, context, text("one call"), &answer);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(text_of(answer), "one call");

  grpc::ClientContext other;
  set_deadline(other, 10);
  EXPECT_EQ(blocking_unary_call(*stub_, "/test.Generic/Nothing", other, text("x"), &answer).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(BlockingGenericCallTest, TheDeadlineEndsAWaitForAnAnswerThatNeverComes) {
  grpc::ClientContext context;
  set_deadline(context, 0.3);
  const auto start = Clock::now();
  BlockingGenericCall call(*stub_, kSilent, context);
  EXPECT_TRUE(call.write(text("anyone?")));
  grpc::ByteBuffer answer;
  EXPECT_FALSE(call.read(&answer));
  EXPECT_EQ(call.finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(seconds_since(start), 3.0);

  grpc::ClientContext unary;
  set_deadline(unary, 0.3);
  EXPECT_EQ(blocking_unary_call(*stub_, kSilent, unary, text("anyone?"), &answer).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
}

TEST_F(BlockingGenericCallTest, ACancelFromAnotherThreadEndsTheWaitAtOnce) {
  grpc::ClientContext context;
  set_deadline(context, 60);
  const auto start = Clock::now();
  BlockingGenericCall call(*stub_, kSilent, context);
  EXPECT_TRUE(call.write(text("anyone?")));
  std::jthread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    context.TryCancel();
  });
  grpc::ByteBuffer answer;
  EXPECT_FALSE(call.read(&answer));
  EXPECT_EQ(call.finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(ProtobufAsByteBuffer, AMessageGoesAndComesBackAndRubbishIsRefused) {
  ps::PushReply reply;
  reply.set_version(41);
  reply.set_staleness(3);
  grpc::ByteBuffer buffer = to_byte_buffer(reply);
  ps::PushReply back;
  ASSERT_TRUE(parse_byte_buffer(buffer, back));
  EXPECT_EQ(back.version(), 41);
  EXPECT_EQ(back.staleness(), 3);

  grpc::ByteBuffer rubbish = text("\xff\xff\xff");
  EXPECT_FALSE(parse_byte_buffer(rubbish, back));
}

}  // namespace
}  // namespace dtbench
