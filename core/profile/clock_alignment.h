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

}  // namespace dtbench
