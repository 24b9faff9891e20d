#pragma once
// report.json — the run's summary: blueprint, provenance, data, model, per-epoch phase statistics,
// accuracy and loss, speed and memory — and the per-phase breakdown table printed at the end.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/train/trainer.h"
#include "launch/monitor/provenance.h"

namespace dtbench {

struct RunSummary {
  std::string run_id;
  std::string status = "running";  // running | complete | failed
  std::string error;               // when failed
  nlohmann::json blueprint;
  Provenance provenance;
  nlohmann::json data;   // format, path, samples, synthetic
  nlohmann::json model;  // name, parameters, macs_per_sample, input
  std::string transport;
  int rank = 0;
  int world = 1;
  double clock_read_seconds = 0.0;  // cost of one clock read, for the profiler-overhead estimate
  double startup_seconds = 0.0;     // from the process's start to its training's start
  // Of start-up, the autotune before the first step (a device's cuDNN search, or the host's
  // convolution timing; 0 with conv_algorithms: rules on the host): done before training so that
  // no timed step holds it (Trainer::autotune).
  double autotune_seconds = 0.0;
  nlohmann::json network;           // this rank's cluster host and interface traffic (network.h)
  std::vector<EpochResult> epochs;
  double wall_seconds = 0.0;
};

nlohmann::json phases_json(const EpochPhases& phases);
nlohmann::json report_json(const RunSummary& summary);

// The per-phase breakdown as a fixed-width table: one row per phase (mean, median, p95 in ms and
// share of the step) for the first epoch (warm-up) and for the rest together (exact percentiles
// of their steps), then the training wall time split into steps, between steps and evaluation.
std::string breakdown_table(const std::vector<EpochResult>& epochs);
// Every worker side by side, from the reports the workers sent rank 0 (report_json of each):
// per-step phase means over the steady epochs (the warm-up rule), the comm split, and across
// workers the mean, min and max of each phase with the slowest worker named (stragglers set the pace of synchronous training).
nlohmann::json workers_json(const std::vector<std::string>& worker_reports);
std::string workers_table(const std::vector<std::string>& worker_reports);

// Forward and backward ms per step by operator kind, largest first; empty when not timed.
// Clock reads per-operator timing adds to a step: two per layer call, forward and backward.
double operator_clock_reads_per_step(const std::map<std::string, OperatorTime>& operators, int64_t steps);
std::string operators_table(const std::map<std::string, OperatorTime>& operators, int64_t steps);

// One line per epoch: loss, accuracy, images/s.
std::string epochs_table(const std::vector<EpochResult>& epochs);

}  // namespace dtbench
