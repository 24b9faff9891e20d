#pragma once
// The scaling view of report.html, for runs at several worker counts (a workers or hosts axis):
// per transport the speed-up in throughput over one worker (or over the transport's fewest
// workers) and the scaling efficiency (speed-up per worker added), each beside the ideal; and the
// bytes a worker sends per step against the model's gradient size.
#include <string>
#include <vector>

#include "launch/report/run_record.h"

namespace dtbench {

struct ScalingPoint {
  std::string transport;
  int world = 1;
  double speedup = 0.0;     // images/s over the yardstick's
  double efficiency = 0.0;  // speedup x yardstick workers / workers
  int yardstick_world = 1;  // the workers of the run it is measured against
};

// One point per transport and worker count (medians over runs alike); empty unless the runs span
// at least two worker counts. Runs with an injected straggler are left out.
std::vector<ScalingPoint> scaling_points(const std::vector<RunRecord>& runs);

// Speed-up, efficiency and bytes per step charts; none without scaling points.
std::vector<std::string> scaling_charts(const std::vector<RunRecord>& runs);

}  // namespace dtbench
