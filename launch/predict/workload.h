#pragma once
// What the cost model takes from a measured run directory: the compute phases per step (medians,
// the first epoch left out when there are more), the gradient's buckets as the run's transport
// cut them (the model rebuilt from report.json's name, input and classes; comm.bucket_mb and
// comm.overlap from its blueprint), and the step time it measured, to check a prediction against.
#include <filesystem>
#include <string>

#include "launch/predict/cost_model.h"

namespace dtbench {

struct MeasuredRun {
  std::filesystem::path dir{};
  std::string model{}, transport{};
  int workers = 1;
  Workload workload{};
  double measured_step_s = 0.0;  // mean seconds per step, over the epochs the compute phases are from
  double measured_comm_s = 0.0;  // exposed comm per step
  std::string source{};          // "report.json of RUN: N worker(s), epochs a-b, medians"
};

// InputError naming the file and key when the directory holds no usable report.json.
MeasuredRun load_measured_run(const std::filesystem::path& run_dir);

// Buckets of about `bucket_bytes` in the order backward completes them (one fused bucket for 0).
std::vector<int64_t> gradient_buckets(const std::string& model, const std::vector<int64_t>& input, int64_t classes,
                                      int64_t bucket_bytes);

}  // namespace dtbench
