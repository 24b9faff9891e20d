#include "paramserver/ps_connection.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>

#include <grpcpp/create_channel.h>
#include <grpcpp/support/channel_arguments.h>
#include <spdlog/spdlog.h>

#include "core/util/clock.h"
#include "core/util/error.h"
#include "paramserver/blocking_generic_call.h"
#include "paramserver/in_flight_calls.h"
#include "paramserver/memory_reuse.h"
#include "paramserver/wire_frames.h"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

void set_deadline(grpc::ClientContext& context, double seconds) {
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds)));
}

// A refusal the user must fix (token, run id, worker count) is an InputError; the rest IoError.
[[noreturn]] void throw_status(const std::string& message, grpc::StatusCode code) {
  if (code == grpc::StatusCode::UNAUTHENTICATED || code == grpc::StatusCode::PERMISSION_DENIED ||
      code == grpc::StatusCode::FAILED_PRECONDITION) {
    throw InputError(message);
  }
  throw IoError(message);
}

// Push, Pull, PushPull and PushPullOne as raw calls on the generic stub (blocking_generic_call.h):
// the worker writes and reads grpc::ByteBuffers itself (wire_frames.h), as the generated stub would
// with protobuf messages, but without copying floats into or out of protobuf strings. The names are
// ps.proto's; the server parses the same bytes.
constexpr const char* kPushMethod = "/dtbench.ps.ParameterService/Push";
constexpr const char* kPullMethod = "/dtbench.ps.ParameterService/Pull";
constexpr const char* kPushPullMethod = "/dtbench.ps.ParameterService/PushPull";
constexpr const char* kPushPullOneMethod = "/dtbench.ps.ParameterService/PushPullOne";

// How long a push waits, after its call ended, for gRPC to let go of the gradient's memory (it
// does once the bytes are written, normally before the server's answer has arrived).
constexpr auto kReleaseWait = std::chrono::seconds(5);

// Fulfils `released` when the last piece pointing into the gradient is let go (shared: a piece
// gRPC lets go of later than kReleaseWait still finds it).
std::shared_ptr<const void> release_signal(const std::shared_ptr<std::promise<void>>& released) {
  return {nullptr, [released](const void*) { released->set_value(); }};
}

struct ValuesRead {
  int64_t version = 0;
  int64_t staleness = 0;
  int64_t bytes = 0;
  bool any = false;  // a message arrived
  Clock::time_point first_at{};
};

// Reads a stream of value chunks (PullChunk, PushPullChunk) into `assembler`: "" or what is wrong
// with them. `first_at` is set when the first message arrives.
std::string read_values(BlockingGenericCall& stream, ChunkFields fields, SliceAssembler& assembler, ValuesRead& read) {
  grpc::ByteBuffer message;
  WireChunk chunk;
  std::string problem;
  bool first = true;
  while (problem.empty() && stream.read(&message)) {
    read.bytes += static_cast<int64_t>(message.Length());
    problem = chunk.parse(message, fields);
    const int64_t version = chunk.field(1);  // PullChunk.version, PushPullChunk.version
    if (first) {
      read.first_at = Clock::now();
      read.version = version;
      read.staleness = chunk.field(2);  // PushPullChunk.staleness (a PullChunk has no field 2)
    }
    if (problem.empty() && version != read.version) problem = "the version changed in the middle of the values";
    first = false;
    if (problem.empty()) problem = chunk.absorb_into(assembler);
  }
  read.any = !first;
  return problem;
}

// Writes the gradient's messages, the last one marked as the last (the end of the request stream
// travels with it); stops early when the server has ended the call. Returns the bytes written.
int64_t write_gradient(BlockingGenericCall& stream, FrameWriter& frames, int worker, int64_t version) {
  int64_t bytes = 0, payload_bytes = 0;
  bool first = true;
  while (first || !frames.done()) {
    first = false;
    const grpc::ByteBuffer message = frames.next(kPushChunk, {{1, worker}, {2, version}}, &payload_bytes);
    bytes += static_cast<int64_t>(message.Length());
    grpc::WriteOptions options;
    if (frames.done()) options.set_last_message();
    if (!stream.write(message, options)) break;  // the server ended the call; finish says why
  }
  return bytes;
}

// The largest push made as one unary call (PushPullOne). bench ps, 2 workers, before / after
// alternated at load 6-9: as fast as the stream or faster up to 64 KiB (4 KiB rounds 339-1008 us
// against 533-1528), slower at 1 MiB (6.2-18.8 ms against 3.9-4.4), where the stream stays.
constexpr int64_t kOneCallMaxBytes = 64 << 10;

// Whether a push of `index`'s floats goes as one unary call: it is one message of FrameWriter's
// (at most max_message_bytes of floats) and small.
bool one_call(const KeyIndex& index, int64_t max_message_bytes) {
  return index.float_count * static_cast<int64_t>(sizeof(float)) <= std::min(max_message_bytes, kOneCallMaxBytes);
}

// A push of one message (one_call), its floats copied into a slice of its own. gRPC
// lets go of a unary call's request only when it frees the call, which it may do later on another
// thread (under load: milliseconds later), while the caller may change the gradient as soon as the
// call returns; the copy (at most max_message_bytes) costs less than waiting for that.
grpc::ByteBuffer one_message_copy(const KeyIndex& index, const float* grads, int64_t max_message_bytes, int worker,
                                  int64_t version) {
  FrameWriter frames(index, grads, max_message_bytes, /*pin=*/nullptr);  // read right here, never after
  int64_t payload_bytes = 0;
  const grpc::ByteBuffer pieces = frames.next(kPushChunk, {{1, worker}, {2, version}}, &payload_bytes);
  grpc::Slice whole;
  if (!pieces.DumpToSingleSlice(&whole).ok()) throw IoError("could not copy a push into one message");
  return {&whole, 1};
}

// A PushPullOne's answer, one PushPullChunk holding every value, read into `values`: "" or what
// is wrong with it.
std::string read_answer(const grpc::ByteBuffer& answer, const KeyIndex& index, float* values, PushPullResult& result) {
  WireChunk chunk;
  result.bytes_received = static_cast<int64_t>(answer.Length());
  if (std::string problem = chunk.parse(answer, kPushPullChunk); !problem.empty()) return problem;
  result.version = chunk.field(1);    // PushPullChunk.version
  result.staleness = chunk.field(2);  // PushPullChunk.staleness
  SliceAssembler assembler(index, values, /*require_finite=*/false);
  if (std::string problem = chunk.absorb_into(assembler); !problem.empty()) return problem;
  return assembler.incomplete();
}

}  // namespace

std::string status_code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return fmt::format("status {}", static_cast<int>(code));
  }
}

PsConnection::PsConnection(ConnectionOptions options) : options_(std::move(options)) {
  grpc::ChannelArguments args;
  // Notice a server that comes back (or comes up late) within about a second, not gRPC's default
  // of up to two minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // A connection of its own: gRPC otherwise shares one TCP connection among all channels of a
  // process to the same address with the same arguments, so workers in one process (bench ps,
  // tests) would push and pull through one connection, read by one server thread at a time —
  // unlike workers in processes of their own.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  reuse_freed_memory();
  if (!options_.security.tls_target_name.empty()) args.SetSslTargetNameOverride(options_.security.tls_target_name);
  channel_ = grpc::CreateCustomChannel(options_.address, make_channel_credentials(options_.security), args);
  stub_ = ps::ParameterService::NewStub(channel_);
  generic_stub_ = std::make_unique<grpc::GenericStub>(channel_);
}

template <typename Attempt>
void PsConnection::call(const std::string& what, double timeout_seconds, bool patient, Attempt&& attempt) {
  const auto start = Clock::now();
  double backoff = options_.backoff_seconds;
  for (int attempts = 1;; ++attempts) {
    grpc::ClientContext context;
    set_deadline(context, timeout_seconds);
    attach_token(context, options_.security.auth_token);
    grpc::Status status;
    {
      const InFlightCall in_flight(context);
      status = attempt(context);
    }
    if (status.ok()) return;
    const double elapsed = seconds_since(start);
    const bool stopped = in_flight_calls_cancelled();
    const bool again = patient ? elapsed + backoff < options_.connect_timeout_seconds : attempts <= options_.retries;
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE || !again || stopped) {
      const std::string cause = stopped ? "the worker was stopped while it waited for this server"
                                : status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
                                    ? fmt::format("no answer within {} s", timeout_seconds)
                                    : status.error_message();
      throw_status(fmt::format("parameter server {} (shard {}): {} failed after {} attempt(s) in {:.1f} s: {}: {}",
                               options_.address, options_.shard, what, attempts, elapsed,
                               status_code_name(status.error_code()), cause),
                   status.error_code());
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
    backoff = std::min(2 * backoff, 2.0);
  }
}

// The caller may change the gradient once a push returns: gRPC must be done reading it.
void PsConnection::wait_for_release(std::future<void>& released) const {
  if (released.wait_for(kReleaseWait) != std::future_status::ready) {
    spdlog::warn("parameter server {} (shard {}): gRPC still held the gradient {} s after the push ended",
                 options_.address, options_.shard, kReleaseWait.count());
  }
}

ps::RegisterReply PsConnection::register_worker(const std::string& run_id, int worker, int world) {
  ps::RegisterRequest request;
  request.set_run_id(run_id);
  request.set_worker(worker);
  request.set_world(world);
  ps::RegisterReply reply;
  call(fmt::format("registering worker {}", worker), options_.call_timeout_seconds, /*patient=*/true,
       [&](grpc::ClientContext& context) { return stub_->Register(&context, request, &reply); });
  return reply;
}

PushResult PsConnection::push(int worker, int64_t version, const KeyIndex& index, const float* base) {
  PushResult result;
  call(fmt::format("push of worker {} at version {}", worker, version), options_.push_timeout_seconds, false,
       [&](grpc::ClientContext& context) {
         const auto start = Clock::now();
         ps::PushReply reply;
         result.bytes_sent = 0;
         const auto released = std::make_shared<std::promise<void>>();
         std::future<void> all_released = released->get_future();
         grpc::Status status;
         {
           BlockingGenericCall stream(*generic_stub_, kPushMethod, context);
           FrameWriter frames(index, base, options_.max_message_bytes, release_signal(released));
           int64_t payload_bytes = 0;
           bool first = true;
           while (first || !frames.done()) {
             first = false;
             const grpc::ByteBuffer message = frames.next(kPushChunk, {{1, worker}, {2, version}}, &payload_bytes);
             result.bytes_sent += static_cast<int64_t>(message.Length());
             if (!stream.write(message)) break;  // the server ended the call; finish says why
           }
           stream.writes_done();
           result.written_seconds = seconds_since(start);
           grpc::ByteBuffer answer;
           const bool answered = stream.read(&answer);
           status = stream.finish();
           if (status.ok() && !(answered && parse_byte_buffer(answer, reply))) {
             status = grpc::Status(grpc::StatusCode::INTERNAL, "the server's answer to the push is not a PushReply");
           }
         }  // the frame writer's own hold on the gradient goes with it
         result.replied_seconds = seconds_since(start);
         wait_for_release(all_released);
         result.version = reply.version();
         result.staleness = reply.staleness();
         return status;
       });
  return result;
}

PushPullResult PsConnection::push_pull(int worker, int64_t version, const KeyIndex& index, const float* grads,
                                      float* values) {
  if (one_call(index, options_.max_message_bytes)) {
    return push_pull_one(worker, version, index, grads, values);
  }
  PushPullResult result;
  std::string problem;
  call(fmt::format("push-pull of worker {} at version {}", worker, version), options_.push_timeout_seconds, false,
       [&](grpc::ClientContext& context) {
         const auto start = Clock::now();
         const auto released = std::make_shared<std::promise<void>>();
         std::future<void> all_released = released->get_future();
         grpc::Status status;
         ValuesRead read;
         {
           BlockingGenericCall stream(*generic_stub_, kPushPullMethod, context);  // headers go with the first message
           FrameWriter frames(index, grads, options_.max_message_bytes, release_signal(released));
           result.bytes_sent = write_gradient(stream, frames, worker, version);
           result.written_seconds = seconds_since(start);
           SliceAssembler assembler(index, values, /*require_finite=*/false);
           problem = read_values(stream, kPushPullChunk, assembler, read);
           if (!problem.empty()) context.TryCancel();
           status = stream.finish();
           if (status.ok() && problem.empty()) problem = read.any ? assembler.incomplete() : "the server sent no values";
         }  // the frame writer's own hold on the gradient goes with it
         result.seconds = seconds_since(start);
         result.answered_seconds = read.any ? seconds_between(start, read.first_at) : result.seconds;
         result.version = read.version;
         result.staleness = read.staleness;
         result.bytes_received = read.bytes;
         wait_for_release(all_released);
         return problem.empty() ? status : grpc::Status::OK;
       });
  if (!problem.empty()) {
    throw IoError(fmt::format("parameter server {} (shard {}): its values do not fit this worker's model: {}",
                              options_.address, options_.shard, problem));
  }
  return result;
}

PushPullResult PsConnection::push_pull_one(int worker, int64_t version, const KeyIndex& index, const float* grads,
                                          float* values) {
  PushPullResult result;
  std::string problem;
  call(fmt::format("push-pull of worker {} at version {}", worker, version), options_.push_timeout_seconds, false,
       [&](grpc::ClientContext& context) {
         const auto start = Clock::now();
         const grpc::ByteBuffer request = one_message_copy(index, grads, options_.max_message_bytes, worker, version);
         result.bytes_sent = static_cast<int64_t>(request.Length());
         // One batch (headers, message, end of stream, then the answer and status), on this
         // thread, which polls for its own answer.
         grpc::ByteBuffer answer;
         const grpc::Status status =
             blocking_unary_call(*generic_stub_, kPushPullOneMethod, context, request, &answer);
         result.answered_seconds = seconds_since(start);
         if (status.ok()) problem = read_answer(answer, index, values, result);
         result.seconds = seconds_since(start);
         return problem.empty() ? status : grpc::Status::OK;
       });
  if (!problem.empty()) {
    throw IoError(fmt::format("parameter server {} (shard {}): its values do not fit this worker's model: {}",
                              options_.address, options_.shard, problem));
  }
  return result;
}

PullResult PsConnection::pull(int worker, const KeyIndex& index, float* base) {
  PullResult result;
  std::string problem;
  call(fmt::format("pull of worker {}", worker), options_.call_timeout_seconds, false, [&](grpc::ClientContext& context) {
    const auto start = Clock::now();
    ps::PullRequest request;
    request.set_worker(worker);
    BlockingGenericCall stream(*generic_stub_, kPullMethod, context);
    // The request and its end in one write, with the call's headers: one batch, as a server-streaming
    // call of the generated stub sends it. A failed write needs no check: the read ends, finish says why.
    stream.write(to_byte_buffer(request), grpc::WriteOptions().set_last_message());
    SliceAssembler assembler(index, base, /*require_finite=*/false);
    ValuesRead read;
    problem = read_values(stream, kPullChunk, assembler, read);
    if (!problem.empty()) context.TryCancel();
    const grpc::Status status = stream.finish();
    if (status.ok() && problem.empty()) problem = read.any ? assembler.incomplete() : "the server sent no values";
    result = {.version = read.version, .seconds = seconds_since(start), .bytes_received = read.bytes};
    return problem.empty() ? status : grpc::Status::OK;
  });
  if (!problem.empty()) {
    throw IoError(fmt::format("parameter server {} (shard {}): its values do not fit this worker's model: {}",
                              options_.address, options_.shard, problem));
  }
  return result;
}

ps::StatsReply PsConnection::stats() {
  ps::StatsReply reply;
  call("stats", options_.call_timeout_seconds, false,
       [&](grpc::ClientContext& context) { return stub_->Stats(&context, ps::StatsRequest(), &reply); });
  return reply;
}

bool PsConnection::answers_within(double seconds) {
  grpc::ClientContext context;
  set_deadline(context, seconds);
  attach_token(context, options_.security.auth_token);
  ps::StatsReply reply;
  return stub_->Stats(&context, ps::StatsRequest(), &reply).ok();
}

grpc::Status PsConnection::report_failure(int worker, const std::string& reason, double seconds) {
  grpc::ClientContext context;
  set_deadline(context, seconds);
  attach_token(context, options_.security.auth_token);
  ps::ShutdownRequest request;
  request.set_worker(worker);
  request.set_failure(reason.empty() ? std::string("no reason given") : reason);
  ps::ShutdownReply reply;
  return stub_->Shutdown(&context, request, &reply);
}

ps::CheckpointReply PsConnection::checkpoint() {
  ps::CheckpointReply reply;
  call("checkpoint", options_.call_timeout_seconds, false,
       [&](grpc::ClientContext& context) { return stub_->Checkpoint(&context, ps::CheckpointRequest(), &reply); });
  return reply;
}

bool PsConnection::shutdown(int worker) {
  ps::ShutdownRequest request;
  request.set_worker(worker);
  ps::ShutdownReply reply;
  call("shutdown", options_.call_timeout_seconds, false,
       [&](grpc::ClientContext& context) { return stub_->Shutdown(&context, request, &reply); });
  return reply.stopping();
}

void PsConnection::publish(const std::string& run_id, const std::string& name, const std::string& value) {
  ps::PublishRequest request;
  request.set_run_id(run_id);
  request.set_name(name);
  request.set_value(value);
  ps::PublishReply reply;
  call(fmt::format("publishing '{}'", name), options_.call_timeout_seconds, /*patient=*/true,
       [&](grpc::ClientContext& context) { return stub_->Publish(&context, request, &reply); });
}

std::optional<std::string> PsConnection::fetch(const std::string& run_id, const std::string& name, bool erase,
                                               double wait_seconds) {
  ps::FetchRequest request;
  request.set_run_id(run_id);
  request.set_name(name);
  request.set_erase(erase);
  request.set_wait(wait_seconds > 0);
  ps::FetchReply reply;
  call(fmt::format("fetching '{}'", name), options_.call_timeout_seconds, /*patient=*/true,
       [&](grpc::ClientContext& context) {
         if (wait_seconds <= 0) return stub_->Fetch(&context, request, &reply);
         // The deadline ends the server's wait: running out is "not yet", not a failure.
         set_deadline(context, wait_seconds);
         const grpc::Status status = stub_->Fetch(&context, request, &reply);
         return status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? grpc::Status::OK : status;
       });
  if (!reply.found()) return std::nullopt;
  return std::move(*reply.mutable_value());
}

}  // namespace dtbench
