#pragma once
// What `dtbench predict` prints and writes: the table for the terminal, and predict.json,
// predict.csv and predict.html (charts of step time and scaling efficiency against the workers,
// one per link rate) into a directory, each written to a temporary name and renamed.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "launch/predict/prediction.h"
#include "launch/report/table.h"

namespace dtbench {

inline constexpr const char* kPredictionCsvHeader =
    "link,transport,workers,step_ms,compute_ms,comm_exposed_ms,comm_total_ms,comm_share,speedup,efficiency,"
    "staleness,constants_source,compute_source";

ReportTable prediction_table(const PredictionGrid& grid);
ReportTable crossover_table(const PredictionGrid& grid);
// The model at the run's own N and link against the run, term by term.
ReportTable run_check_table(const RunCheck& check, bool calibrated);
nlohmann::json prediction_json(const PredictionGrid& grid);
std::string prediction_csv(const PredictionGrid& grid);
std::string prediction_html(const PredictionGrid& grid);

// predict.json, predict.csv, predict.html in `dir` (made if missing).
void write_prediction(const PredictionGrid& grid, const std::filesystem::path& dir);

}  // namespace dtbench
