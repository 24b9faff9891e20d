// Each convolution's algorithm chosen by measuring (core/tuning/conv_tuning.h): every algorithm
// that says it runs a shape computes what the reference does there; the measured choice is never
// slower than the fixed rules' beyond the measurement's noise; choices are kept per machine in the
// tuning cache (core/tuning/tuning_cache.h), measured once however many processes ask at once.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "core/kernels/conv_lanes.h"
#include "core/layers/conv2d.h"
#include "core/tuning/conv_tuning.h"
#include "core/tuning/quiet_timer.h"
#include "core/tuning/tuning_cache.h"
#include "core/util/clock.h"
#include "support/conv_check.h"

namespace dtbench {
namespace {

using testing::BlasThreads;
using testing::conv_sizes;

ConvSizes strided(ConvSizes s, int64_t stride) {
  s.stride = stride;
  s.out_height = (s.height + 2 * s.padding - s.kernel) / stride + 1;
  s.out_width = (s.width + 2 * s.padding - s.kernel) / stride + 1;
  return s;
}

// A folder of its own for the tuning cache, removed afterwards; DTBENCH_CACHE_DIR names it.
class CacheFolder {
 public:
  CacheFolder() : path_(std::filesystem::temp_directory_path() / ("dtbench-tuning-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    ::setenv("DTBENCH_CACHE_DIR", path_.c_str(), 1);
  }
  ~CacheFolder() {
    ::unsetenv("DTBENCH_CACHE_DIR");
    std::filesystem::remove_all(path_);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// What runs a shape must compute it: the tuner may take any of them, forward from one and backward
// from another, so each is checked wherever it claims to run — beyond where the rules send it
// (Winograd with 3 input channels, lanes on a wide plane, direct loops with many channels).
TEST(ConvTuning, EveryAlgorithmThatRunsAShapeMatchesTheReference) {
  const BlasThreads threads(1);
  const std::vector<ConvSizes> shapes = {
      conv_sizes(3, 3, 12, 12, 8, 3, 1),   conv_sizes(9, 6, 14, 14, 16, 5, 0), conv_sizes(2, 32, 6, 6, 64, 3, 1),
      conv_sizes(4, 16, 40, 36, 4, 5, 2),  conv_sizes(2, 8, 9, 9, 8, 1, 0),    strided(conv_sizes(2, 4, 9, 9, 6, 3, 1), 2),
  };
  int pairs = 0;
  for (const ConvSizes& s : shapes) {
    for (const ConvAlgorithm algorithm : conv_algorithms()) {
      if (!conv_algorithm_runs(algorithm, s)) continue;
      SCOPED_TRACE(fmt::format("{} on {}", conv_algorithm_name(algorithm), conv_shape_text(s)));
      const ConvFunctions functions = conv_functions(algorithm);
      testing::expect_conv_matches_reference(functions.forward, functions.backward, s, 11);
      ++pairs;
    }
  }
  // gemm on all 6, both Winograds on the two 3x3, lanes on the four of 2x2 or more (and lanes16
  // there, on a CPU with AVX-512F), direct on 5.
  EXPECT_EQ(pairs, 19 + (lanes16_runs_here() ? 4 : 0));
  EXPECT_FALSE(conv_algorithm_runs(ConvAlgorithm::winograd, shapes[1]));   // 5x5
  EXPECT_FALSE(conv_algorithm_runs(ConvAlgorithm::winograd4, shapes[1]));  // 5x5
  EXPECT_FALSE(conv_algorithm_runs(ConvAlgorithm::direct, shapes[5]));    // stride 2
}

TEST(ConvTuning, NamesRoundTrip) {
  for (const ConvAlgorithm algorithm : conv_algorithms()) {
    EXPECT_EQ(conv_algorithm_named(conv_algorithm_name(algorithm)), algorithm);
  }
  EXPECT_FALSE(conv_algorithm_named("fft").has_value());
}

// The measurement's own bookkeeping: a trial for every algorithm that runs the shape, only those,
// and the chosen one the fastest — or the rule's, when that is within kKeepRuleWithin of the fastest.
TEST(ConvTuning, ChoosesTheFastestTimedAlgorithmOrTheRulesWithinItsMargin) {
  const BlasThreads threads(1);
  const ConvSizes s = conv_sizes(8, 16, 16, 16, 16, 3, 1);
  const ConvTuning tuning = measure_conv(s, /*input_grad=*/true);
  EXPECT_EQ(tuning.rule, rule_choice(s));
  EXPECT_FALSE(tuning.from_cache);
  // 3x3 stride 1: every algorithm runs it (lanes16 only on a CPU with AVX-512F).
  ASSERT_EQ(tuning.trials.size(), lanes16_runs_here() ? 6u : 5u);
  for (const bool forward : {true, false}) {
    const ConvAlgorithm chosen = forward ? tuning.forward : tuning.backward;
    const auto ms = [&](const ConvTrial& t) { return forward ? t.forward_ms : t.backward_ms; };
    const auto fastest = std::min_element(tuning.trials.begin(), tuning.trials.end(),
                                          [&](const ConvTrial& a, const ConvTrial& b) { return ms(a) < ms(b); });
    const auto trial_of = [&](ConvAlgorithm a) {
      return *std::find_if(tuning.trials.begin(), tuning.trials.end(), [&](const ConvTrial& t) { return t.algorithm == a; });
    };
    EXPECT_TRUE(std::isfinite(ms(*fastest)) && ms(*fastest) > 0.0);
    if (tuning.too_busy) {  // most timings lost their CPU (the suite runs two tests at once): the rules'
      EXPECT_EQ(chosen, tuning.rule);
      EXPECT_GT(tuning.disturbed_share, 0.5);
    } else if (chosen == tuning.rule) {
      EXPECT_LE(ms(trial_of(chosen)), (1.0 + kKeepRuleWithin) * ms(*fastest) + 1e-9) << conv_tuning_text(tuning);
    } else {
      EXPECT_EQ(chosen, fastest->algorithm) << conv_tuning_text(tuning);
    }
  }
  ConvSizes stride_two = strided(s, 2);
  const ConvTuning only_gemm = measure_conv(stride_two, true);
  ASSERT_EQ(only_gemm.trials.size(), 1u);
  EXPECT_EQ(only_gemm.forward, ConvAlgorithm::gemm);
}

// The least undisturbed timing (quiet_timer.h) of one forward and backward pass with these
// algorithms, of at most `rounds`; the least of all when every one was disturbed.
double least_step_ms(ConvAlgorithm forward, ConvAlgorithm backward, const ConvSizes& s, const Tensor& x,
                     const Tensor& w, const Tensor& dy, int rounds) {
  Tensor y(dy.shape()), dx(x.shape()), dw(w.shape());
  double quiet = 1e300, any = 1e300;
  for (int round = 0; round < rounds; ++round) {
    const QuietTiming t = time_quietly([&] {
      conv_functions(forward).forward(y.data(), x.data(), w.data(), nullptr, s);
      conv_functions(backward).backward(dx.data(), dw.data(), nullptr, dy.data(), x.data(), w.data(), s);
    });
    any = std::min(any, t.ms);
    if (!t.disturbed) quiet = std::min(quiet, t.ms);
  }
  return quiet < 1e300 ? quiet : any;
}

// What the tuning is for: on the layers of the models (LeNet-5's second convolution, ResNet-18's
// stem and stages at CIFAR size), the measured choice is at least as fast as the rules' up to the
// noise of a timing: the least of interleaved repetitions, 15 % allowed, as the suite runs two
// tests at once. Where the choice is the rules' own there is nothing to compare; the layers where
// it differs depend on the CPU (on a 2-core AMD EPYC: the stem; on an Intel Xeon, more).
TEST(ConvTuning, MeasuredChoiceIsNeverSlowerThanTheRulesBeyondNoise) {
  const BlasThreads threads(1);
  const std::vector<ConvSizes> layers = {conv_sizes(64, 6, 14, 14, 16, 5, 0), conv_sizes(8, 3, 32, 32, 64, 3, 1),
                                         conv_sizes(8, 64, 32, 32, 64, 3, 1), conv_sizes(8, 128, 16, 16, 128, 3, 1),
                                         conv_sizes(8, 256, 8, 8, 256, 3, 1), conv_sizes(8, 512, 4, 4, 512, 3, 1)};
  int compared = 0;
  for (const ConvSizes& s : layers) {
    const ConvTuning tuning = measure_conv(s, true);
    std::printf("%-32s %s\n", conv_shape_text(s).c_str(), conv_tuning_text(tuning).c_str());
    if (tuning.forward == tuning.rule && tuning.backward == tuning.rule) continue;
    ++compared;
    const Tensor x = testing::random_tensor({s.batch, s.in_channels, s.height, s.width}, 3);
    const Tensor w = testing::random_tensor({s.out_channels, s.in_channels, s.kernel, s.kernel}, 4);
    const Tensor dy = testing::random_tensor({s.batch, s.out_channels, s.out_height, s.out_width}, 5);
    double measured = 1e300, rules = 1e300;
    for (int round = 0; round < 8; ++round) {  // interleaved, so a busy moment falls on both
      measured = std::min(measured, least_step_ms(tuning.forward, tuning.backward, s, x, w, dy, 2));
      rules = std::min(rules, least_step_ms(tuning.rule, tuning.rule, s, x, w, dy, 2));
    }
    std::printf("%-32s measured choice %.3f ms a pass, the rules' %.3f ms\n", conv_shape_text(s).c_str(), measured,
                rules);
    EXPECT_LE(measured, 1.15 * rules) << conv_shape_text(s) << ": " << conv_tuning_text(tuning);
  }
  std::printf("%d of %zu layers chosen otherwise than by the rules\n", compared, layers.size());
}

TEST(TuningCache, MeasuresOnceAndReadsBackAfterwards) {
  const CacheFolder folder;
  int measured = 0;
  TuningCache cache(folder.path() / "choices.json");
  const auto measure = [&] {
    ++measured;
    return nlohmann::json{{"answer", 42}};
  };
  EXPECT_EQ(cache.find_or_measure("a key", measure)["answer"], 42);
  EXPECT_EQ(cache.find_or_measure("a key", measure)["answer"], 42);
  EXPECT_EQ(TuningCache(folder.path() / "choices.json").find_or_measure("a key", measure)["answer"], 42);
  EXPECT_EQ(measured, 1);
  cache.find_or_measure("another key", measure);
  EXPECT_EQ(measured, 2);
}

// A measurement made on a machine too busy to believe it is used once and not kept.
TEST(TuningCache, AMeasurementNotToKeepIsMadeAgainNextTime) {
  const CacheFolder folder;
  int measured = 0;
  TuningCache cache(folder.path() / "choices.json");
  const auto too_busy = [&]() -> std::optional<nlohmann::json> {
    ++measured;
    return std::nullopt;
  };
  EXPECT_TRUE(cache.find_or_measure("k", too_busy).is_null());
  EXPECT_TRUE(cache.find_or_measure("k", too_busy).is_null());
  EXPECT_EQ(measured, 2);
  EXPECT_EQ(cache.find_or_measure("k", [] { return nlohmann::json(7); }), 7);
}

TEST(TuningCache, ADamagedFileIsMeasuredOverNotTrusted) {
  const CacheFolder folder;
  std::filesystem::create_directories(folder.path());
  std::ofstream(folder.path() / "choices.json") << "{\"format\": 1, \"entries\": {\"k\": ";  // cut short
  int measured = 0;
  TuningCache cache(folder.path() / "choices.json");
  EXPECT_EQ(cache.find_or_measure("k", [&] { return nlohmann::json(++measured); }), 1);
  EXPECT_EQ(cache.find_or_measure("k", [&] { return nlohmann::json(++measured); }), 1);  // repaired
}

// A cache folder that cannot be made (a file stands where it would go): every measurement is
// still made and returned, just not kept.
TEST(TuningCache, AFolderThatCannotBeMadeStillGivesEachMeasurement) {
  const CacheFolder folder;
  std::filesystem::create_directories(folder.path());
  std::ofstream(folder.path() / "not-a-folder") << "x";
  TuningCache cache(folder.path() / "not-a-folder" / "choices.json");
  int measured = 0;
  EXPECT_EQ(cache.find_or_measure("k", [&] { return nlohmann::json(++measured); }), 1);
  EXPECT_EQ(cache.find_or_measure("k", [&] { return nlohmann::json(++measured); }), 2);
}

// One layer's choice, measured into `folder`'s cache: the cache file's path and its contents (one
// entry), or nothing when the machine was too busy to keep a measurement.
struct MeasuredCache {
  std::filesystem::path file;
  nlohmann::json whole;
};
const ConvSizes kCachedShape = conv_sizes(2, 4, 8, 8, 4, 3, 1);
std::optional<MeasuredCache> cache_after_measuring(const CacheFolder& folder) {
  if (tuned_conv(kCachedShape, true).too_busy) return std::nullopt;
  MeasuredCache cache{folder.path() / "conv-algorithms.json", {}};
  cache.whole = nlohmann::json::parse(std::ifstream(cache.file));
  EXPECT_EQ(cache.whole["entries"].size(), 1u);
  return cache;
}

// An entry this version cannot read (an algorithm it does not know) is measured again, not trusted.
TEST(ConvTuning, AnEntryNamingAnUnknownAlgorithmIsMeasuredAgain) {
  const CacheFolder folder;
  const BlasThreads threads(1);
  auto cache = cache_after_measuring(folder);
  if (!cache) GTEST_SKIP() << "the machine was too busy to keep a measurement";
  for (auto& [key, entry] : cache->whole["entries"].items()) entry["forward"] = "fft";
  std::ofstream(cache->file) << cache->whole.dump();
  const ConvTuning again = tuned_conv(kCachedShape, true);
  EXPECT_FALSE(again.from_cache);
  EXPECT_TRUE(conv_algorithm_runs(again.forward, kCachedShape)) << conv_tuning_text(again);
}

// A choice made among other candidates (by a version before lanes16, or on a CPU that ran fewer)
// is not kept: the candidates are part of the key, so it is measured again, and then read.
TEST(ConvTuning, AChoiceMadeAmongOtherCandidatesIsMeasuredAgain) {
  const CacheFolder folder;
  const BlasThreads threads(1);
  auto cache = cache_after_measuring(folder);
  if (!cache) GTEST_SKIP() << "the machine was too busy to keep a measurement";
  const std::string key = cache->whole["entries"].begin().key();
  const size_t of = key.rfind("; of ");
  ASSERT_NE(of, std::string::npos) << key;
  EXPECT_NE(key.find("gemm", of), std::string::npos) << key;
  nlohmann::json earlier;
  earlier[key.substr(0, of) + "; of gemm direct"] = cache->whole["entries"].begin().value();
  cache->whole["entries"] = earlier;
  std::ofstream(cache->file) << cache->whole.dump();
  const ConvTuning again = tuned_conv(kCachedShape, true);
  EXPECT_FALSE(again.from_cache);
  if (again.too_busy) GTEST_SKIP() << "the machine was too busy to keep the new measurement";
  EXPECT_TRUE(tuned_conv(kCachedShape, true).from_cache);
}

// Ranks start together and all find no choice yet: one measures while the others wait for it, so
// they neither measure beside it on the same cores nor end up with choices of their own.
TEST(TuningCache, ProcessesAskingAtOnceMeasureOnce) {
  const CacheFolder folder;
  const std::filesystem::path log = folder.path() / "measured.log";
  std::filesystem::create_directories(folder.path());
  std::vector<pid_t> children;
  for (int child = 0; child < 3; ++child) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      TuningCache cache(folder.path() / "choices.json");
      const nlohmann::json value = cache.find_or_measure("shared", [&] {
        std::ofstream(log, std::ios::app) << child << "\n";
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return nlohmann::json(child);
      });
      std::ofstream(folder.path() / ("got-" + std::to_string(child))) << value.dump();
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::ifstream measured(log);
  const std::string lines((std::istreambuf_iterator<char>(measured)), {});
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 1) << lines;
  std::set<std::string> values;
  for (int child = 0; child < 3; ++child) {
    std::ifstream got(folder.path() / ("got-" + std::to_string(child)));
    values.insert(std::string((std::istreambuf_iterator<char>(got)), {}));
  }
  EXPECT_EQ(values.size(), 1u);
}

// A layer's autotune measures its shape once per machine: a second layer of that shape (a later
// run, another rank) reads the choice back; a batch it was not tuned for keeps the rules.
TEST(ConvTuning, LayersShareTheMachinesChoicesThroughTheCache) {
  const CacheFolder folder;
  const BlasThreads threads(1);
  Conv2d first(16, 16, 3, 1, 1), second(16, 16, 3, 1, 1);
  first.configure({16, 12, 12});
  second.configure({16, 12, 12});
  first.autotune(4);
  second.autotune(4);
  ASSERT_EQ(first.tunings().size(), 1u);
  ASSERT_EQ(second.tunings().size(), 1u);
  const ConvTuning& measured = first.tunings().at(4);
  const ConvTuning& read_back = second.tunings().at(4);
  if (measured.too_busy) {  // the suite's neighbours took most timings' CPU: nothing kept, the rules used
    EXPECT_TRUE(read_back.too_busy);
    EXPECT_EQ(read_back.forward, rule_choice(first.sizes(4)));
    EXPECT_FALSE(std::filesystem::exists(folder.path() / "conv-algorithms.json"));
    return;
  }
  EXPECT_FALSE(measured.from_cache);
  EXPECT_TRUE(read_back.from_cache);
  EXPECT_EQ(read_back.forward, measured.forward);
  EXPECT_EQ(read_back.backward, measured.backward);
  EXPECT_EQ(read_back.trials.size(), measured.trials.size());
  EXPECT_TRUE(std::filesystem::exists(folder.path() / "conv-algorithms.json"));
  EXPECT_FALSE(first.tunings().contains(5));
}

}  // namespace
}  // namespace dtbench
