#pragma once
// Where a process's steady clock stands against the run's reference clock, so that timelines
// written by different processes (and hosts) can be laid on one time axis. Steady clocks have no
// common epoch across hosts; a transport that talks to every worker measures the difference.
#include <string>

namespace dtbench {

struct ClockAlignment {
  std::string reference;            // whose steady clock: "rank 0 steady clock", "server 0 steady clock"
  double offset_seconds = 0.0;      // this process's steady clock minus the reference's
  double uncertainty_seconds = 0.0; // half the best round trip the estimate came from (0: the reference itself)
  std::string method;               // how it was measured, for the reader of the trace
};

// Cristian's algorithm: of several probes — our clock when we asked, the other clock's reading,
// our clock when the answer came — the one with the shortest round trip bounds the difference
// best, to within half that round trip (the other clock was read somewhere inside it).
class CristianEstimate {
 public:
  // All in seconds; `sent` and `received` on our clock, `remote` on the other's.
  void add_probe(double sent, double remote, double received) {
    const double round_trip = received - sent;
    if (probes_ > 0 && round_trip >= best_round_trip_) return;
    ++probes_;
    best_round_trip_ = round_trip;
    remote_minus_ours_ = remote - 0.5 * (sent + received);
  }
  double remote_minus_ours() const { return remote_minus_ours_; }
  double uncertainty() const { return 0.5 * best_round_trip_; }

 private:
  int probes_ = 0;
  double best_round_trip_ = 0.0;
  double remote_minus_ours_ = 0.0;
};

}  // namespace dtbench
