#include "core/profile/comm_timings.h"

#include <algorithm>

namespace dtbench {

namespace {
double seconds_from(std::chrono::steady_clock::time_point origin, std::chrono::steady_clock::time_point at) {
  return std::chrono::duration<double>(at - origin).count();
}
}  // namespace

void CommTimings::record(std::chrono::steady_clock::time_point backward_start, std::span<const CommSpan> spans) {
  for (const CommSpan& span : spans) {
    // A handful of pieces a step: a linear search allocates nothing after the first step.
    auto piece = std::find_if(pieces_.begin(), pieces_.end(),
                              [&](const CommTiming& p) { return p.index == span.index && p.what == span.what; });
    if (piece == pieces_.end()) piece = pieces_.insert(pieces_.end(), CommTiming{.what = span.what, .index = span.index});
    piece->bytes = span.bytes;
    ++piece->steps;
    piece->ready_s += seconds_from(backward_start, span.ready);
    piece->start_s += seconds_from(backward_start, span.start);
    piece->end_s += seconds_from(backward_start, span.end);
  }
}

std::vector<CommTiming> CommTimings::means() const {
  std::vector<CommTiming> means = pieces_;
  for (CommTiming& piece : means) {
    const auto steps = static_cast<double>(piece.steps);
    piece.ready_s /= steps;
    piece.start_s /= steps;
    piece.end_s /= steps;
  }
  return means;
}

}  // namespace dtbench
