#pragma once
// launch/predict — the transports' cost model and `dtbench predict`'s work: the model itself
// (cost_model.h, one screen), fitting its constants to `bench allreduce` / `bench ps` JSON
// (fit.h), the compute phases and gradient buckets of a measured run directory (workload.h), the
// grid of predictions with its crossovers (prediction.h) and its table, JSON, CSV and HTML
// (prediction_output.h); and the model fitted on runs of smaller clusters (run_fit.h, fit_runs.h,
// order_statistic.h) with its output (run_fit_output.h).
// May include: core, launch/report (the run-directory readers, tables, SVG charts). Never the
// commands above it.
#include "launch/predict/cost_model.h"
#include "launch/predict/fit.h"
#include "launch/predict/prediction.h"
#include "launch/predict/prediction_output.h"
#include "launch/predict/run_fit.h"
#include "launch/predict/run_fit_output.h"
#include "launch/predict/workload.h"
