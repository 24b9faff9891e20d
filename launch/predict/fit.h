#pragma once
// Fitting the cost model's constants (cost_model.h) to measurements: alpha and beta by least
// squares on relative error (so that small messages, where alpha shows, weigh as much as large
// ones) from `bench allreduce --json` and `bench ps --json` files, each tagged with the link rate it
// was measured at; and, for a link rate nobody measured, the constants extrapolated from those that
// were.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "launch/predict/cost_model.h"

namespace dtbench {

struct LinkRate {
  double bits_per_s = 0.0;
  std::string text;  // as given: "10gbit"
  double bytes_per_s() const { return bits_per_s / 8; }
};

// "500mbit", "1gbit", "2.5gbit", "100gbit" (kbit, mbit, gbit; any case). InputError otherwise.
LinkRate parse_link_rate(std::string_view text);

struct AllreduceSample {
  int64_t bytes = 0;
  int workers = 2;
  double seconds = 0.0;         // mean over the iterations: what the fit takes
  // What the measured curve takes (0: the mean): one slow iteration of five moves a mean far.
  double median_seconds = 0.0;
};

struct PsSample {
  int64_t bytes = 0;
  int workers = 1, shards = 1;  // bench ps: worker threads against shards on another host
  // Workers the servers waited for: more than `workers` when bench ps ran one process per host
  // (--world), each beside a shard, as the study's ps runs do.
  int world = 1;
  bool async = false;  // the servers' mode: an async round has no barrier
  double transfer_s = 0.0;      // push + pull
  double server_s = 0.0;        // wait: the servers' aggregation and update
  double tcp_s = 0.0;           // the same bytes out and back over loopback TCP, no link (0: not measured)
  double round_s = 0.0;         // the whole round, push + wait + pull: mean, and median (0: not given)
  double median_round_s = 0.0;
};

// alpha and beta of allreduce_seconds() given the reduce cost per byte (measured apart: it and
// beta both scale with the bytes), each sample counted in the steps `schedule` takes at its ranks
// and size. InputError when the samples cannot determine both.
NetworkConstants fit_allreduce(const std::vector<AllreduceSample>& samples, double reduce_s_per_byte,
                               AllreduceSchedule schedule);
// The same from groups of samples timed together: each group one row, its seconds against its
// steps' latencies and wire bytes summed. A run's buckets where its transport kept several in
// flight at once are one group (the group's time is measured, no one bucket's is); fit_allreduce
// is every sample a group of its own.
NetworkConstants fit_allreduce_groups(const std::vector<std::vector<AllreduceSample>>& groups,
                                      double reduce_s_per_byte, AllreduceSchedule schedule);
// The samples as cost_model.h's measured curve (sorted by size, sizes measured twice averaged),
// when they all have one rank count; else none.
void set_measured_curve(const std::vector<AllreduceSample>& samples, NetworkConstants& c);
// The rounds of bench ps spread over a world of processes (PsSample::world > workers) as
// cost_model.h's measured curve of parameter-server rounds, when they all have one world; else none.
void set_measured_ps_rounds(const std::vector<PsSample>& samples, NetworkConstants& c);
// alpha, beta from push + pull, the server's apply cost per byte from the wait, less summing the
// one worker's gradient in (reduce_s_per_byte), and TCP's CPU per byte from the loopback rounds
// (their total time over their total bytes: the large payloads, where latency does not show).
NetworkConstants fit_ps(const std::vector<PsSample>& samples, double reduce_s_per_byte);

// A `--fit LINK:FILE` argument.
struct FitFile {
  LinkRate link;
  std::filesystem::path path;
};
FitFile parse_fit_argument(std::string_view text);

// The cost of summing a received byte as the bench files recorded it where they ran, on the
// cluster's hosts (`reduce_ns_per_byte`, written by bench allreduce): the median over the files
// that have it; none where no file does (files written before it was recorded). InputError for a
// value that is not a number >= 0, naming the file.
std::optional<double> recorded_summing_s_per_byte(const std::vector<FitFile>& files);

// Constants per transport and link rate (bits/s), fitted from the files.
class FittedConstants {
 public:
  // `extrapolated_alpha_s` >= 0 replaces the fitted latency at links nobody measured (on the
  // emulated cluster it is the shared CPU's scheduling delay, not a network's).
  FittedConstants(const std::vector<FitFile>& files, double reduce_s_per_byte, double extrapolated_alpha_s = -1);
  // Fitted at `link`, or extrapolated from the links that were measured (source says which);
  // InputError when no file measured `transport` at all.
  NetworkConstants at(PredictTransport transport, const LinkRate& link) const;
  // Whether some file measured `transport` (at() then answers at every link).
  bool measured(PredictTransport transport) const;

 private:
  std::map<std::pair<PredictTransport, double>, NetworkConstants> fitted_;
  double extrapolated_alpha_s_ = -1;
};

}  // namespace dtbench
