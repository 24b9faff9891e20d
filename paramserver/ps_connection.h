#pragma once
// A worker's line to one parameter server. Every call has a deadline; a server that cannot be
// reached (UNAVAILABLE: gone, not started, connection refused) is retried with exponential backoff
// and then reported as an IoError naming the server — never a hang. Refusals that retrying cannot
// fix come back at once: a wrong token or a server of another run as InputError, anything else
// (an aborted sync step, a malformed request) as IoError with the server's message.
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>

#include "paramserver/ps.grpc.pb.h"
#include "paramserver/security.h"
#include "paramserver/wire_format.h"

namespace dtbench {

struct ConnectionOptions {
  std::string address;  // host:port
  int shard = 0;
  ClientSecurity security;
  double call_timeout_seconds = 60.0;     // deadline of each attempt of a call
  double push_timeout_seconds = 90.0;     // a push may wait for the other workers (sync)
  double connect_timeout_seconds = 60.0;  // how long Register waits for a server that is not up yet
  int retries = 4;                        // further attempts of a call the server did not take
  double backoff_seconds = 0.1;           // before the first retry; doubled each time, at most 2 s
  int64_t max_message_bytes = kDefaultMaxMessageBytes;
};

struct PushResult {
  int64_t version = 0;        // the server's version once it applied the gradient
  int64_t staleness = 0;
  double written_seconds = 0.0;  // from the start of the call until every slice was sent
  double replied_seconds = 0.0;  // from the start of the call until the server answered
  int64_t bytes_sent = 0;     // message bytes
};

struct PushPullResult {
  int64_t version = 0;  // of the values received: the server's version once it applied the gradient
  int64_t staleness = 0;
  // From the start of the call until every slice was sent; 0 for a small push of one message,
  // made as one unary call (PushPullOne) whose write is not timed apart from the answer.
  double written_seconds = 0.0;
  double answered_seconds = 0.0;  // ... until the first message of the values arrived
  double seconds = 0.0;           // ... until the last
  int64_t bytes_sent = 0;         // message bytes
  int64_t bytes_received = 0;
};

struct PullResult {
  int64_t version = 0;
  double seconds = 0.0;
  int64_t bytes_received = 0;
};

class PsConnection {
 public:
  explicit PsConnection(ConnectionOptions options);

  const std::string& address() const { return options_.address; }
  int shard() const { return options_.shard; }

  ps::RegisterReply register_worker(const std::string& run_id, int worker, int world);
  // The gradient of `index`'s keys, read from `base` (the arena's gradients).
  PushResult push(int worker, int64_t version, const KeyIndex& index, const float* base);
  // The values of `index`'s keys, written into `base` (the arena's values).
  PullResult pull(int worker, const KeyIndex& index, float* base);
  // push then pull in one call: the gradient read from `grads`, the values of the version it made
  // written into `values` (both laid out as `index` says). A push of one message of at most 64 KiB
  // goes as the unary PushPullOne, a larger one as the stream PushPull.
  PushPullResult push_pull(int worker, int64_t version, const KeyIndex& index, const float* grads, float* values);
  ps::StatsReply stats();
  // One Stats call within `seconds`, no retry, never cancelled by a stop: whether the server
  // answers at all (a roll call after a failure, ps_client.h).
  bool answers_within(double seconds);
  ps::CheckpointReply checkpoint();
  bool shutdown(int worker);
  // Tells the server this worker failed for `reason`, so that it ends the run at once: one call
  // within `seconds`, no retry, never cancelled by a stop (the failure may be the stop itself).
  grpc::Status report_failure(int worker, const std::string& reason, double seconds);
  void publish(const std::string& run_id, const std::string& name, const std::string& value);
  // The value published under `name`, if any. With `wait_seconds` > 0 the server holds the call
  // until it is published or that time has passed (then nullopt).
  std::optional<std::string> fetch(const std::string& run_id, const std::string& name, bool erase,
                                   double wait_seconds = 0.0);

 private:
  // Calls `attempt(context)` until it succeeds, retrying UNAVAILABLE with backoff (for `patient`
  // calls: as long as connect_timeout_seconds allows); throws on any other failure.
  template <typename Attempt>
  void call(const std::string& what, double timeout_seconds, bool patient, Attempt&& attempt);

  void wait_for_release(std::future<void>& released) const;
  // push_pull of a small push of one message, as the unary PushPullOne.
  PushPullResult push_pull_one(int worker, int64_t version, const KeyIndex& index, const float* grads,
                               float* values);

  ConnectionOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<ps::ParameterService::Stub> stub_;
  // Push, Pull, PushPull and PushPullOne as raw calls (ps_connection.cpp says why).
  std::unique_ptr<grpc::GenericStub> generic_stub_;
};

// "UNAVAILABLE", "ABORTED", ...
std::string status_code_name(grpc::StatusCode code);

}  // namespace dtbench
