#pragma once
// What the training loop asks of gradient synchronisation, without knowing who does it. The
// transports in comm/ (and allreduce/, paramserver/) implement this; the loop only says "finish
// this step", so it never branches on the transport.
#include <cstdint>
#include <span>
#include <string>

#include "core/models/model.h"
#include "core/profile/comm_span.h"

namespace dtbench {

// How long the end of one step took, split the way reports show it. Seconds.
struct SyncTimes {
  double comm = 0.0;      // exposed communication: what the step waited for after backward
  double hidden = 0.0;    // communication that ran during backward, before the step reached the sync
  double comm_total = 0.0;  // hidden + comm
  double update = 0.0;    // applying the new weights (optimizer, or copying pulled weights)
  double wait = 0.0;      // part of comm_total spent waiting for the slowest peer
  double transfer = 0.0;  // the rest of comm_total: moving and reducing bytes
  double push = 0.0;      // parameter servers: sending gradients
  double pull = 0.0;      // parameter servers: receiving weights
  double d2h = 0.0;       // a model on a device: moving the gradients to the host for the transport
  double h2d = 0.0;       // ... and what the transport wrote (gradients or weights) back to the device
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
  int slowest_rank = -1;  // the worker that reached the synchronisation point last, if known
  // The step's communication piece by piece, for the timeline: a view into the transport's own
  // storage, valid until its next finish_step; empty for a transport that keeps none.
  std::span<const CommSpan> spans;
};

class GradientSync {
 public:
  virtual ~GradientSync() = default;
  virtual std::string name() const = 0;
  // Before step 0: make every worker start from the same weights (broadcast or pull). A transport
  // that overlaps communication with backward installs the model's gradient-ready hook here.
  virtual void start(Model& model) = 0;
  // After backward: the arena's gradients are this worker's; on return the arena's values hold
  // the next version of the weights.
  virtual SyncTimes finish_step(Model& model, int64_t step) = 0;
  // After the last step: flush, check that every worker holds the same weights, say goodbye.
  virtual void stop(Model& model) = 0;
};

}  // namespace dtbench
