#include "core/tuning/conv_tuning.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "core/tuning/quiet_timer.h"
#include "core/tuning/timing_rounds.h"
#include "core/tuning/tuning_cache.h"
#include "core/util/blas.h"
#include "core/util/rng.h"

namespace dtbench {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Every candidate runs once untimed first (growing its scratch, warming the caches), then they are
// timed in rounds (timing_rounds.h) until about this much of the fastest one's time is spent.
constexpr double kTargetMs = 30.0;
// When more than this share of the timings lost their CPU to other processes, the machine was too
// busy for the measurement to be believed: the layer keeps the rules' choice, and nothing is kept
// in the tuning cache, so a quieter run measures again.
constexpr double kMostDisturbed = 0.5;

struct Buffers {
  std::vector<float> inp, weight, bias, out, dout, dinp, dweight, dbias;
};

std::vector<float> random_values(int64_t count, Rng& rng) {
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = rng.uniform(-1.0f, 1.0f);
  return values;
}

Buffers buffers_for(const ConvSizes& s) {
  Rng rng(12345);
  Buffers b;
  b.inp = random_values(s.batch * s.in_channels * s.in_plane(), rng);
  b.weight = random_values(s.out_channels * s.patch_count(), rng);
  b.bias = random_values(s.out_channels, rng);
  b.dout = random_values(s.batch * s.out_channels * s.out_plane(), rng);
  b.out.resize(b.dout.size());
  b.dinp.resize(b.inp.size());
  b.dweight.resize(b.weight.size());
  b.dbias.resize(b.bias.size());
  return b;
}

enum class Pass { forward, backward };

QuietTiming run(ConvAlgorithm algorithm, Pass pass, const ConvSizes& s, Buffers& b, bool input_grad) {
  const ConvFunctions functions = conv_functions(algorithm);
  return time_quietly([&] {
    if (pass == Pass::forward) {
      functions.forward(b.out.data(), b.inp.data(), b.weight.data(), b.bias.data(), s);
    } else {
      functions.backward(input_grad ? b.dinp.data() : nullptr, b.dweight.data(), b.dbias.data(), b.dout.data(),
                         b.inp.data(), b.weight.data(), s);
    }
  });
}

// Each candidate's least time for `pass`, and the chosen one; `disturbed` counts the timings that
// lost their CPU, of `timed` in all.
ConvAlgorithm time_pass(Pass pass, const std::vector<ConvAlgorithm>& candidates, ConvAlgorithm rule,
                        const ConvSizes& s, Buffers& b, bool input_grad, std::vector<double>& best_ms, int& disturbed,
                        int& timed_runs) {
  for (const ConvAlgorithm algorithm : candidates) run(algorithm, pass, s, b, input_grad);
  const auto rule_at = std::find(candidates.begin(), candidates.end(), rule);
  const size_t rule_index = rule_at != candidates.end() ? static_cast<size_t>(rule_at - candidates.begin()) : kNoRule;
  const TimingRounds rounds = time_in_rounds(candidates.size(), rule_index, kTargetMs,
                                             [&](size_t i) { return run(candidates[i], pass, s, b, input_grad); });
  best_ms = rounds.best_ms;
  disturbed += rounds.disturbed;
  timed_runs += rounds.timed;
  const size_t fastest = static_cast<size_t>(std::min_element(best_ms.begin(), best_ms.end()) - best_ms.begin());
  if (rule_index != kNoRule && best_ms[rule_index] <= (1.0 + kKeepRuleWithin) * best_ms[fastest]) return rule;
  return candidates[fastest];
}

nlohmann::json ms_json(double ms) { return std::isfinite(ms) ? nlohmann::json(ms) : nlohmann::json(); }
double ms_of(const nlohmann::json& value) { return value.is_number() ? value.get<double>() : kInfinity; }

ConvAlgorithm algorithm_of(const nlohmann::json& entry, const char* key) {
  const auto algorithm = conv_algorithm_named(entry.at(key).get<std::string>());
  if (!algorithm) throw std::invalid_argument(fmt::format("unknown algorithm {}", entry.at(key).dump()));
  return *algorithm;
}

nlohmann::json to_json(const ConvTuning& tuning) {
  nlohmann::json ms = nlohmann::json::object();
  for (const ConvTrial& trial : tuning.trials) {
    ms[std::string(conv_algorithm_name(trial.algorithm))] = {ms_json(trial.forward_ms), ms_json(trial.backward_ms)};
  }
  return {{"forward", conv_algorithm_name(tuning.forward)},
          {"backward", conv_algorithm_name(tuning.backward)},
          {"rule", conv_algorithm_name(tuning.rule)},
          {"ms", ms}};
}

ConvTuning from_json(const nlohmann::json& entry) {
  ConvTuning tuning{.forward = algorithm_of(entry, "forward"),
                    .backward = algorithm_of(entry, "backward"),
                    .rule = algorithm_of(entry, "rule"),
                    .trials = {},
                    .from_cache = true};
  for (const auto& [name, times] : entry.at("ms").items()) {
    const auto algorithm = conv_algorithm_named(name);
    if (!algorithm) throw std::invalid_argument("unknown algorithm " + name);
    tuning.trials.push_back({*algorithm, ms_of(times.at(0)), ms_of(times.at(1))});
  }
  return tuning;
}

// The algorithms that run this shape on this CPU.
std::vector<ConvAlgorithm> candidates_for(const ConvSizes& sizes) {
  std::vector<ConvAlgorithm> candidates;
  for (const ConvAlgorithm algorithm : conv_algorithms()) {
    if (conv_algorithm_runs(algorithm, sizes)) candidates.push_back(algorithm);
  }
  return candidates;
}

}  // namespace

ConvTuning measure_conv(const ConvSizes& sizes, bool input_grad) {
  const std::vector<ConvAlgorithm> candidates = candidates_for(sizes);
  ConvTuning tuning;
  tuning.rule = rule_choice(sizes);
  Buffers buffers = buffers_for(sizes);
  std::vector<double> forward_ms, backward_ms;
  int disturbed = 0, timed_runs = 0;
  tuning.forward =
      time_pass(Pass::forward, candidates, tuning.rule, sizes, buffers, input_grad, forward_ms, disturbed, timed_runs);
  tuning.backward =
      time_pass(Pass::backward, candidates, tuning.rule, sizes, buffers, input_grad, backward_ms, disturbed, timed_runs);
  for (size_t i = 0; i < candidates.size(); ++i) tuning.trials.push_back({candidates[i], forward_ms[i], backward_ms[i]});
  tuning.disturbed_share = timed_runs > 0 ? static_cast<double>(disturbed) / timed_runs : 0.0;
  if (tuning.disturbed_share > kMostDisturbed) {  // too busy to tell: the rules, measured again next time
    tuning.forward = tuning.backward = tuning.rule;
    tuning.too_busy = true;
  }
  return tuning;
}

ConvTuning tuned_conv(const ConvSizes& sizes, bool input_grad) {
  // The candidates belong to the key: a choice made before this version could run an algorithm
  // (lanes16 came later) is measured again rather than kept.
  std::vector<std::string_view> names;
  for (const ConvAlgorithm algorithm : candidates_for(sizes)) names.push_back(conv_algorithm_name(algorithm));
  const std::string key = fmt::format("{}; {} thread(s); {}{}; of {}", machine_key(), blas::threads(),
                                      conv_shape_text(sizes), input_grad ? "" : "; no input gradient",
                                      fmt::join(names, " "));
  TuningCache cache = TuningCache::in_default_folder("conv-algorithms.json");
  bool measured = false;
  ConvTuning busy;  // what a measurement too busy to keep chose (the cache then returns null)
  const nlohmann::json entry = cache.find_or_measure(key, [&]() -> std::optional<nlohmann::json> {
    measured = true;
    // Once one shape found the machine too busy, this process measures no more: on a host held
    // to a fraction of a core every timing loses its CPU, and each shape would cost its full
    // rounds only to keep the rules' choice.
    static std::atomic<bool> found_busy{false};
    ConvTuning tuning;
    if (found_busy) {
      tuning.rule = tuning.forward = tuning.backward = rule_choice(sizes);
      tuning.too_busy = true;
      tuning.disturbed_share = 1.0;
    } else {
      tuning = measure_conv(sizes, input_grad);
    }
    if (tuning.too_busy) {
      found_busy = true;
      busy = std::move(tuning);
      return std::nullopt;
    }
    return to_json(tuning);
  });
  if (entry.is_null()) return busy;
  try {
    ConvTuning tuning = from_json(entry);
    tuning.from_cache = !measured;
    return tuning;
  } catch (const std::exception& error) {  // an entry by hand or by another version: measured again
    spdlog::warn("tuning cache {}: entry '{}' unreadable ({}); measured again", cache.file().string(), key, error.what());
    return measure_conv(sizes, input_grad);
  }
}

std::string conv_shape_text(const ConvSizes& s) {
  return fmt::format("n{} c{} {}x{} -> {} k{} s{} p{}", s.batch, s.in_channels, s.height, s.width, s.out_channels,
                     s.kernel, s.stride, s.padding);
}

std::string conv_tuning_text(const ConvTuning& tuning) {
  std::string times;
  for (const ConvTrial& trial : tuning.trials) {
    const auto ms = [](double value) { return std::isfinite(value) ? fmt::format("{:.3g}", value) : std::string("-"); };
    times += fmt::format("{}{} {}/{}", times.empty() ? "" : ", ", conv_algorithm_name(trial.algorithm),
                         ms(trial.forward_ms), ms(trial.backward_ms));
  }
  std::string how = tuning.from_cache ? ", from the cache" : "";
  if (tuning.too_busy) {
    how = tuning.trials.empty() ? ", the rules': an earlier layer found the machine too busy to measure"
                                : fmt::format(", the rules': the machine was too busy ({:.0f} % of the timings lost "
                                              "their CPU)", 100.0 * tuning.disturbed_share);
  }
  return fmt::format("forward {}, backward {} (rule: {}){}; ms forward/backward: {}", conv_algorithm_name(tuning.forward),
                     conv_algorithm_name(tuning.backward), conv_algorithm_name(tuning.rule), how, times);
}

}  // namespace dtbench
