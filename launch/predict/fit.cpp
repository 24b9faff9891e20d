// Least squares for the model's two unknowns per transport and link: y = alpha*a + (1/beta)*b,
// each sample divided by its y (relative error), solved by the 2x2 normal equations.
#include "launch/predict/fit.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/util/error.h"

namespace dtbench {

namespace {

struct Row {
  double a = 0, b = 0, y = 0;
};

// alpha, 1/beta minimising sum(((alpha*a + inv_beta*b) - y) / y)^2.
std::pair<double, double> least_squares(const std::vector<Row>& rows, const std::string& what) {
  double aa = 0, ab = 0, bb = 0, ay = 0, by = 0;
  for (const Row& r : rows) {
    if (!(r.y > 0)) fail_input("{}: a measured time of {} s; expected a positive time", what, r.y);
    const double a = r.a / r.y, b = r.b / r.y;
    aa += a * a, ab += a * b, bb += b * b, ay += a, by += b;  // y / y = 1
  }
  const double det = aa * bb - ab * ab;
  if (rows.size() < 2 || std::abs(det) <= 1e-12 * aa * bb) {
    fail_input("{}: {} sample(s) cannot fix both alpha and beta; measure at least two message sizes", what,
               rows.size());
  }
  return {(ay * bb - by * ab) / det, (by * aa - ay * ab) / det};
}

// 1/beta alone, alpha held at 0: sum((inv_beta*b - y)^2) at its least. With the latency gone the
// line is the bandwidth's, so the seconds count as they are: the large sizes, which it governs, weigh most.
double through_origin(const std::vector<Row>& rows) {
  double bb = 0, by = 0;
  for (const Row& r : rows) bb += r.b * r.b, by += r.b * r.y;
  return by / bb;
}

NetworkConstants checked(const std::vector<Row>& rows, double alpha, double inverse_beta, const std::string& what) {
  // A negative latency is noise around a small one: none — and then 1/beta fitted again without it,
  // since the slope that went with a negative intercept is too steep for a line through the origin.
  if (alpha < 0) alpha = 0, inverse_beta = through_origin(rows);
  if (!(inverse_beta > 0)) {
    fail_input("{}: the fit gives no bandwidth (1/beta = {:g} s/B): time does not grow with size", what,
               inverse_beta);
  }
  return {.alpha_s = alpha, .beta_bytes_per_s = 1.0 / inverse_beta};
}

}  // namespace

LinkRate parse_link_rate(std::string_view text) {
  static const std::regex pattern(R"(^([0-9]+(\.[0-9]+)?)([kKmMgG])bit$)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, pattern) || std::stod(m[1].str()) <= 0) {
    fail_input("unknown link rate '{}'; expected a positive number and kbit, mbit or gbit (e.g. 1gbit, 100gbit)",
               text);
  }
  const char unit = static_cast<char>(std::tolower(m[3].str()[0]));
  const double scale = unit == 'k' ? 1e3 : unit == 'm' ? 1e6 : 1e9;
  return {.bits_per_s = std::stod(m[1].str()) * scale, .text = std::string(text)};
}

NetworkConstants fit_allreduce(const std::vector<AllreduceSample>& samples, double reduce_s_per_byte,
                               AllreduceSchedule schedule) {
  std::vector<std::vector<AllreduceSample>> one_each;
  for (const AllreduceSample& s : samples) one_each.push_back({s});
  return fit_allreduce_groups(one_each, reduce_s_per_byte, schedule);
}

NetworkConstants fit_allreduce_groups(const std::vector<std::vector<AllreduceSample>>& groups,
                                      double reduce_s_per_byte, AllreduceSchedule schedule) {
  std::vector<Row> rows;
  for (const std::vector<AllreduceSample>& group : groups) {
    Row row;
    for (const AllreduceSample& s : group) {
      if (s.workers < 2) continue;  // one rank moves nothing
      const AllreduceSteps steps = allreduce_steps(s.bytes, s.workers, schedule);
      row.a += steps.latencies, row.b += steps.wire_bytes;
      row.y += s.seconds - steps.summed_bytes * reduce_s_per_byte;
    }
    if (row.b > 0) rows.push_back(row);
  }
  const auto [alpha, inverse_beta] = least_squares(rows, "allreduce fit");
  NetworkConstants c = checked(rows, alpha, inverse_beta, "allreduce fit");
  c.reduce_s_per_byte = reduce_s_per_byte;
  c.schedule = schedule;
  return c;
}

void set_measured_curve(const std::vector<AllreduceSample>& samples, NetworkConstants& c) {
  c.curve.clear();
  c.curve_workers = 0;
  if (samples.empty()) return;
  std::map<int64_t, std::pair<double, int>> by_size;  // seconds summed, count
  for (const AllreduceSample& s : samples) {
    if (s.workers != samples.front().workers) return;
    auto& [sum, count] = by_size[s.bytes];
    sum += s.median_seconds > 0 ? s.median_seconds : s.seconds, ++count;
  }
  for (const auto& [bytes, sum_count] : by_size) c.curve.emplace_back(bytes, sum_count.first / sum_count.second);
  c.curve_workers = samples.front().workers;
}

void set_measured_ps_rounds(const std::vector<PsSample>& samples, NetworkConstants& c) {
  std::vector<AllreduceSample> rounds;
  for (const PsSample& s : samples) {
    rounds.push_back({.bytes = s.bytes, .workers = s.world, .seconds = s.round_s, .median_seconds = s.median_round_s});
  }
  set_measured_curve(rounds, c);
}

NetworkConstants fit_ps(const std::vector<PsSample>& samples, double reduce_s_per_byte) {
  std::vector<Row> rows;
  double server_per_shard_byte = 0, weight = 0, tcp_s = 0, tcp_bytes = 0;
  for (const PsSample& s : samples) {
    if (s.tcp_s > 0) tcp_s += s.tcp_s, tcp_bytes += static_cast<double>(s.bytes);
    const double bytes = static_cast<double>(s.bytes);
    const double incast = std::max(1.0, static_cast<double>(s.workers) / s.shards);
    rows.push_back({.a = 2, .b = 2 * bytes * incast, .y = s.transfer_s});
    // wait = S/K * (W * reduce + apply): least squares through the origin.
    const double x = bytes / s.shards;
    server_per_shard_byte += x * (s.server_s - x * s.workers * reduce_s_per_byte);
    weight += x * x;
  }
  const auto [alpha, inverse_beta] = least_squares(rows, "parameter-server fit");
  NetworkConstants c = checked(rows, alpha, inverse_beta, "parameter-server fit");
  c.reduce_s_per_byte = reduce_s_per_byte;
  c.apply_s_per_byte = weight > 0 ? std::max(0.0, server_per_shard_byte / weight) : 0.0;
  c.cpu_s_per_byte = tcp_bytes > 0 ? tcp_s / tcp_bytes : 0.0;
  return c;
}

FitFile parse_fit_argument(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    fail_input("--fit '{}': expected LINK:FILE, e.g. 1gbit:bench-allreduce.json", text);
  }
  FitFile fit{.link = parse_link_rate(text.substr(0, colon)), .path = std::string(text.substr(colon + 1))};
  if (!std::filesystem::is_regular_file(fit.path)) fail_input("--fit {}: no such file", fit.path.string());
  return fit;
}

}  // namespace dtbench
