#pragma once
// launch/bench — the benchmarks and the pre-flight check: `bench step | ops | allreduce | ps`
// (each registers its own subcommand under `bench`), the operator cases and their costs, the
// machine's ceilings, size parsing, and `doctor`'s ring probe.
// May include: core, allreduce, paramserver, launch/blueprint, launch/report (tables, statistics),
// launch/monitor. Never the commands above it.
#include "launch/bench/allreduce.h"
#include "launch/bench/doctor.h"
#include "launch/bench/ops.h"
#include "launch/bench/ps.h"
#include "launch/bench/step.h"
