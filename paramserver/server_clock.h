#pragma once
// A worker's steady clock against parameter server 0's, so that the timelines of workers and of
// server 0 (which the workers of a ps run all talk to) lie on one time axis. Workers without MPI
// have no rank 0 to measure against; server 0 is the one peer they share.
#include "core/profile/clock_alignment.h"
#include "paramserver/ps_connection.h"

namespace dtbench {

// The name of the reference clock, as server 0's own trace gives it too.
inline constexpr const char* kServerZeroClock = "server 0 steady clock";

// Cristian's algorithm over `rounds` Stats calls to `server` (which reports its steady clock
// midway through answering): the call with the shortest round trip bounds the offset best, to
// within half of it. On one host the clocks agree and the offset comes out ~0.
ClockAlignment align_with_server(PsConnection& server, int rounds = 8);

}  // namespace dtbench
