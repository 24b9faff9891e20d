#pragma once
// The two ways a parameter server applies gradients.
//   sync:  waits for every worker's gradient of version t, averages them, applies one update and
//          answers with version t+1 — the same arithmetic as an allreduce transport.
//   async: applies each worker's gradient as it arrives, scaled by 1/workers (so one round of
//          every worker's push moves the weights as far as one sync step), and answers with its
//          latest weights; a gradient computed on an older version is "stale" by the difference.
#include <string>
#include <string_view>

#include "core/util/error.h"

namespace dtbench {

enum class PsMode { Sync, Async };

inline std::string_view mode_name(PsMode mode) { return mode == PsMode::Sync ? "sync" : "async"; }

inline PsMode parse_mode(const std::string& text) {
  if (text == "sync") return PsMode::Sync;
  if (text == "async") return PsMode::Async;
  fail_input("parameter-server mode '{}' is not known; choose sync or async", text);
}

}  // namespace dtbench
