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
  double best_round_trip = 1e9;
  for (int round = 0; round < rounds; ++round) {
    const auto sent = Clock::now();
    const ps::StatsReply reply = server.stats();
    const auto received = Clock::now();
    const double round_trip = std::chrono::duration<double>(received - sent).count();
    if (round_trip >= best_round_trip) continue;
    best_round_trip = round_trip;
    const double server_seconds = static_cast<double>(reply.steady_clock_ns()) * 1e-9;
    // Ours minus the server's, at the moment the server read its clock (our midpoint of the call).
    alignment.offset_seconds = 0.5 * (seconds_since_epoch(sent) + seconds_since_epoch(received)) - server_seconds;
    alignment.uncertainty_seconds = 0.5 * round_trip;
  }
  return alignment;
}

}  // namespace dtbench
