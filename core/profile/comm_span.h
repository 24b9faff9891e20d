#pragma once
// One piece of a step's communication (an allreduce bucket, say) as a transport timed it, for the
// timeline. Transports keep them in storage they own, preallocated, and hand them out as a view
// valid until the next step: recording one costs two clock reads and no allocation.
#include <chrono>
#include <cstdint>

namespace dtbench {

struct CommSpan {
  const char* what = "";  // a string literal: "allreduce bucket"
  int index = 0;          // the bucket; -1: none (shown without a number)
  int64_t bytes = 0;      // payload of the piece; 0: shown without a size
  // When the transport had the piece to send (a bucket: its last gradient out of backward), and
  // when it began and ended it; ready == start for a piece that never waited.
  std::chrono::steady_clock::time_point ready{}, start{}, end{};
};

}  // namespace dtbench
