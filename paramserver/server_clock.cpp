#include "paramserver/server_clock.h"

#include <chrono>

#include <fmt/format.h>

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since_epoch(Clock::time_point t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }

}  // namespace

ClockAlignment align_with_server(PsConnection& server, int rounds) {
  ClockAlignment alignment{.reference = kServerZeroClock,
                           .method = fmt::format("Cristian's algorithm over the Stats call: best of {} round trips "
                                                 "to server 0 ({})",
                                                 rounds, server.address())};
  CristianEstimate estimate;
  for (int round = 0; round < rounds; ++round) {
    const double sent = seconds_since_epoch(Clock::now());
    const ps::StatsReply reply = server.stats();
    estimate.add_probe(sent, static_cast<double>(reply.steady_clock_ns()) * 1e-9, seconds_since_epoch(Clock::now()));
  }
  // Ours minus the server's.
  alignment.offset_seconds = -estimate.remote_minus_ours();
  alignment.uncertainty_seconds = estimate.uncertainty();
  return alignment;
}

}  // namespace dtbench
