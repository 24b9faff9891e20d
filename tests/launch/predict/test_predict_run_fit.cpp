// The model fitted on runs of smaller clusters: the straggler term against a closed form and a
// Monte-Carlo draw, each term recovered from synthetic runs whose true parameters are known, and a
// prediction for 4 workers from runs at 2 and 3 set against the same figure worked by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "launch/predict/fit_runs.h"
#include "launch/predict/order_statistic.h"
#include "launch/predict/run_fit.h"
#include "launch/predict/run_fit_output.h"
#include "launch/report/table.h"
#include "tests/launch/predict/synthetic_benches.h"
#include "tests/launch/predict/synthetic_fit_runs.h"

namespace dtbench {
namespace {

TEST(ExpectedMax, UniformSamplesGiveTheClosedForm) {
  // The largest of n draws from U(0, 1) has mean n / (n + 1).
  std::vector<double> uniform;
  for (int i = 0; i <= 10'000; ++i) uniform.push_back(i / 10'000.0);
  for (int n : {1, 2, 3, 4, 16}) EXPECT_NEAR(expected_max_of(uniform, n), n / (n + 1.0), 1e-4) << n;
}

TEST(ExpectedMax, MatchesAMonteCarloDraw) {
  // A skewed set (most steps fast, a few slow, as on shared cores), in no order.
  const std::vector<double> samples = {0.012, 0.010, 0.031, 0.011, 0.010, 0.013, 0.045, 0.010, 0.012, 0.020};
  std::mt19937 random(7);
  std::uniform_int_distribution<size_t> pick(0, samples.size() - 1);
  for (int n : {2, 3, 4, 8}) {
    double sum = 0;
    constexpr int kTrials = 200'000;
    for (int t = 0; t < kTrials; ++t) {
      double largest = 0;
      for (int d = 0; d < n; ++d) largest = std::max(largest, samples[pick(random)]);
      sum += largest;
    }
    EXPECT_NEAR(expected_max_of(samples, n), sum / kTrials, 0.005 * sum / kTrials) << n << " draws";
  }
}

TEST(ExpectedMax, OneDrawIsTheMeanAndMoreDrawsNeverLess) {
  const std::vector<double> samples = {3.0, 1.0, 2.0};
  EXPECT_DOUBLE_EQ(expected_max_of(samples, 1), 2.0);
  EXPECT_GT(expected_max_of(samples, 2), expected_max_of(samples, 1));
  EXPECT_LE(expected_max_of(samples, 50), 3.0);
  EXPECT_THROW(expected_max_of({}, 2), InputError);
  EXPECT_THROW(expected_max_of(samples, 0), InputError);
}

TEST(FitTerm, RecoversALineAndKeepsOnePointConstant) {
  const auto n = [](int w) { return static_cast<double>(w); };
  const TermFit line = fit_term({{2, 0.5 + 2 * 0.25}, {3, 0.5 + 3 * 0.25}, {4, 0.5 + 4 * 0.25}}, n, "N");
  EXPECT_NEAR(line.a, 0.5, 1e-12);
  EXPECT_NEAR(line.b, 0.25, 1e-12);
  EXPECT_NEAR(line.at(8), 2.5, 1e-12);
  const TermFit one = fit_term({{2, 0.3}, {2, 0.5}}, n, "N");
  EXPECT_DOUBLE_EQ(one.at(16), 0.4);
  EXPECT_THROW(fit_term({}, n, "N"), InputError);
  // A mean below 0 is used as none, and its words say so.
  const TermFit mean = mean_term({{2, 0.002}, {3, 0.004}});
  EXPECT_DOUBLE_EQ(mean.at(8), 0.003);
  EXPECT_EQ(mean.how.find("taken as none"), std::string::npos) << mean.how;
  const TermFit below = mean_term({{2, -0.002}, {3, 0.001}});
  EXPECT_EQ(below.at(4), 0.0);
  EXPECT_NE(below.how.find("-0.500 ms, the mean over 2 run(s) at 2, 3 workers (below 0: taken as none)"),
            std::string::npos) << below.how;
}

TEST(RunFit, AllreduceRecoversItsTermsAndPredictsFourWorkersAsByHand) {
  const RunFit fit = fit_on_runs({allreduce_run(2), allreduce_run(3)}, nullptr);
  EXPECT_NEAR(fit.allreduce.alpha_s, kAlpha, 1e-3 * kAlpha);
  EXPECT_NEAR(fit.allreduce.beta_bytes_per_s, kBeta, 1e-3 * kBeta);
  EXPECT_NEAR(fit.overhead.at(4), kDelayMean, 1e-9);
  EXPECT_EQ(fit.fit_workers, (std::vector<int>{2, 3}));
  // By hand at 4: the slowest of 4 draws, 30 - 20/16 = 28.75 ms; 6 ring steps of 200 us + 262,144
  // B at 50 MB/s (5.24288 ms) = 32.65728 ms; delays 2.25 ms.
  const double by_hand = 0.02875 + 6 * (200e-6 + 262'144 / 50e6) + 0.00225;
  const RunFitStep four = predict_from_runs(fit, 4);
  EXPECT_NEAR(four.step.step_s, by_hand, 1e-9);
  EXPECT_NEAR(four.straggler_s, 0.02875 - 0.020, 1e-12);
  // The fit reproduces the runs it was fitted on, but for their delays' distance from the mean.
  EXPECT_NEAR(predict_from_runs(fit, 2).step.step_s, allreduce_run(2).step_s + kDelayMean - (kO0 + 2 * kO1), 1e-9);
}

// Two buckets of one size that run off the line in opposite directions at every N (0.8 of it
// reduced beside backward on shared cores, 1.2 after it, as AlexNet's two 64 MiB buckets did: 0.92
// and 1.16): each keeps its ratio, and nothing of it is read as delays. (Buckets of different
// sizes can differ in the line itself: alpha and beta take what they can.)
TEST(RunFit, EachBucketKeepsItsRatioToTheLine) {
  const auto line = [](int n) { return 2 * (n - 1) * (kAlpha + static_cast<double>(kBytes) / n / kBeta); };
  const auto two_buckets = [&](int n) {
    FitRun run = allreduce_run(n);
    run.last_bucket_wait_s = 0;
    run.measured.workload.bucket_bytes = {kBytes, kBytes};
    run.measured.workload.bucket_ready = {1.0, 1.0};
    run.measured.workload.gradient_bytes = 2 * kBytes;
    const double first = 0.8 * line(n), second = 1.2 * line(n);
    run.pieces = {{.what = "allreduce bucket", .index = 0, .bytes = kBytes, .ready_s = 0.010, .start_s = 0.010,
                   .end_s = 0.010 + first},
                  {.what = "allreduce bucket", .index = 1, .bytes = kBytes, .ready_s = 0.010,
                   .start_s = 0.010 + first, .end_s = 0.010 + first + second}};
    // The second bucket is on the critical path alone: with the ratios lost, it and the delays move.
    run.step_s = slowest_of(n) + first + second + kO0;
    return run;
  };
  const RunFit fit = fit_on_runs({two_buckets(2), two_buckets(3)}, nullptr);
  ASSERT_EQ(fit.allreduce.bucket_shape.size(), 2u);
  // Against the fitted line (between the two), not the true one: their ratio is what holds.
  EXPECT_NEAR(fit.allreduce.bucket_shape[1] / fit.allreduce.bucket_shape[0], 1.5, 1e-9);
  EXPECT_NEAR(fit.overhead.at(4), kO0, 1e-9);
  const double by_hand = slowest_of(4) + 2.0 * line(4) + kO0;
  EXPECT_NEAR(predict_from_runs(fit, 4).step.step_s, by_hand, 1e-9);
}

// PyTorch DDP's runs (engine pytorch, gloo's ring allreduce) fit and predict as the ring's.
TEST(RunFit, DdpRunsFitAsTheRingsAndWaitForTheSlowest) {
  const auto ddp_run = [](int n) {
    FitRun run = allreduce_run(n);
    run.measured.transport = "ddp";
    return run;
  };
  const RunFit ddp = fit_on_runs({ddp_run(2), ddp_run(3)}, nullptr);
  const RunFit ring = fit_on_runs({allreduce_run(2), allreduce_run(3)}, nullptr);
  EXPECT_EQ(ddp.transport, PredictTransport::Ddp);
  EXPECT_DOUBLE_EQ(predict_from_runs(ddp, 4).step.step_s, predict_from_runs(ring, 4).step.step_s);
  EXPECT_NEAR(predict_from_runs(ddp, 4).straggler_s, 0.02875 - 0.020, 1e-12);
  EXPECT_EQ(parse_predict_transport("ddp"), PredictTransport::Ddp);
  EXPECT_THROW(parse_predict_transport("horovod"), InputError);
}

// DDP hands a bucket to gloo while the one before it is still on the wire, and gloo runs both at
// once (two threads): they share the link, and the timing hook sees only completions, so the first
// bucket's span holds half the second's bytes and the second's span the rest. Here 1 MiB is handed
// over 2 ms into backward and 4 MiB at its end (10 ms), each costing its ring line alone; sharing
// the wire from 10 ms, the first completes at 10 ms + twice what it had left, the second when both
// would have, one after the other. Fitted per bucket, those spans give the line the second's
// growth with N as latency (alpha 7 ms, beta 4.5 Gbit/s on a 1 Gbit link in the validation's
// AlexNet runs: +17 % at 4 hosts); timed together, the line comes back.
FitRun ddp_overlapping_run(int n) {
  constexpr int64_t kSmall = 1 << 20, kLarge = 4 << 20;
  const auto alone = [n](int64_t bytes) { return 2 * (n - 1) * (kAlpha + static_cast<double>(bytes) / n / kBeta); };
  FitRun run = allreduce_run(n);
  run.measured.transport = "ddp";
  run.last_bucket_wait_s = 0;
  run.measured.workload.bucket_bytes = {kSmall, kLarge};
  run.measured.workload.bucket_ready = {0.2, 1.0};
  run.measured.workload.overlap = true;
  run.measured.workload.gradient_bytes = kSmall + kLarge;
  const double first_start = 0.002, second_handed = 0.010;
  const double left = alone(kSmall) - (second_handed - first_start);
  const double first_end = second_handed + 2 * left, second_end = first_start + alone(kSmall) + alone(kLarge);
  run.pieces = {{.what = "allreduce bucket", .index = 0, .bytes = kSmall, .ready_s = first_start,
                 .start_s = first_start, .end_s = first_end},
                {.what = "allreduce bucket", .index = 1, .bytes = kLarge, .ready_s = second_handed,
                 .start_s = first_end, .end_s = second_end}};
  // Replayed, each rank's 1 MiB is ready 0.6 of the way through its compute (update and forward
  // half of it, then a fifth of backward's half), the slowest rank's first; both buckets then run
  // on, longer than any rank's backward.
  run.step_s = 0.6 * slowest_of(n) + alone(kSmall) + alone(kLarge) + kO0;
  return run;
}

TEST(RunFit, DdpBucketsInFlightTogetherAreTimedTogether) {
  for (int n : {2, 3}) {  // the set-up is what it says: the second handed over before the first completed
    const FitRun run = ddp_overlapping_run(n);
    ASSERT_LT(run.pieces[1].ready_s, run.pieces[0].end_s);
  }
  const RunFit fit = fit_on_runs({ddp_overlapping_run(2), ddp_overlapping_run(3)}, nullptr);
  EXPECT_NEAR(fit.allreduce.alpha_s, kAlpha, 1e-3 * kAlpha);
  EXPECT_NEAR(fit.allreduce.beta_bytes_per_s, kBeta, 1e-3 * kBeta);
  ASSERT_EQ(fit.allreduce.bucket_shape.size(), 2u);
  EXPECT_NEAR(fit.allreduce.bucket_shape[0], 1.0, 1e-9);
  EXPECT_NEAR(fit.allreduce.bucket_shape[1], 1.0, 1e-9);
  EXPECT_NEAR(fit.overhead.at(4), kO0, 1e-9);
  // By hand at 4: the first bucket once the slowest of 4 has it, then the second.
  const auto line4 = [](int64_t bytes) { return 6 * (kAlpha + static_cast<double>(bytes) / 4 / kBeta); };
  const double by_hand = 0.6 * slowest_of(4) + line4(1 << 20) + line4(4 << 20) + kO0;
  EXPECT_NEAR(predict_from_runs(fit, 4).step.step_s, by_hand, 1e-9);
  const std::string notes = fmt::format("{}", fmt::join(fit.notes, "; "));
  EXPECT_NE(notes.find("2 of them several buckets in flight at once, timed together"), std::string::npos) << notes;
  // The ring's communication thread runs one bucket at a time: its spans are its buckets' own.
  FitRun ring2 = ddp_overlapping_run(2), ring3 = ddp_overlapping_run(3);
  ring2.measured.transport = ring3.measured.transport = "ring";
  const RunFit ring = fit_on_runs({ring2, ring3}, nullptr);
  EXPECT_EQ(fmt::format("{}", fmt::join(ring.notes, "; ")).find("timed together"), std::string::npos);
}

// MPI_Allreduce's algorithm depends on the rank count: for a 1 MiB sum Open MPI takes
// Rabenseifner's, which on 3 ranks folds a rank in and out. Its exchanges over Open MPI's one
// connection per pair go each way in turn: 2 alpha + 2 S/beta at 2, 5 alpha + 4.5 S/beta at 3,
// 4 alpha + 3 S/beta at 4 (worked by hand from the algorithm's description,
// comm/open_mpi_allreduce.h). Runs at 2 and 3 made so; 4 predicted.
FitRun rabenseifner_run(int n, double latencies, double wire_bytes) {
  FitRun run = allreduce_run(n);
  run.measured.transport = "mpi";
  run.last_bucket_wait_s = 0;
  const double transfer = latencies * kAlpha + wire_bytes / kBeta;
  run.pieces.front().end_s = run.pieces.front().start_s + transfer;
  run.step_s = slowest_of(n) + transfer + kO0 + kO1 * n;
  return run;
}

TEST(RunFit, MpiRunsAreCountedInTheAlgorithmOpenMpiTakesAtEachRankCount) {
  const double s = kBytes;
  const RunFit fit = fit_on_runs({rabenseifner_run(2, 2, 2 * s), rabenseifner_run(3, 5, 4.5 * s)}, nullptr);
  EXPECT_NEAR(fit.allreduce.alpha_s, kAlpha, 1e-3 * kAlpha);
  EXPECT_NEAR(fit.allreduce.beta_bytes_per_s, kBeta, 1e-3 * kBeta);
  const double by_hand = 0.02875 + 4 * kAlpha + 3 * s / kBeta + kDelayMean;
  EXPECT_NEAR(predict_from_runs(fit, 4).step.step_s, by_hand, 1e-9);
  // Counted as ring steps, the same runs put 4 ranks a third beyond it (the fold at 3 read as growth).
  const auto as_ring = [](FitRun run) {
    run.measured.transport = "ring";
    return run;
  };
  const RunFit ring = fit_on_runs({as_ring(rabenseifner_run(2, 2, 2 * s)), as_ring(rabenseifner_run(3, 5, 4.5 * s))},
                                  nullptr);
  EXPECT_GT(predict_from_runs(ring, 4).step.step_s, 1.3 * by_hand);
  const bool says = std::any_of(fit.notes.begin(), fit.notes.end(), [](const std::string& note) {
    return note.find("mpi at 3 ranks: Open MPI's allreduce takes rabenseifner (1.0 MiB)") != std::string::npos;
  });
  EXPECT_TRUE(says) << fmt::format("{}", fmt::join(fit.notes, "; "));
  EXPECT_EQ(mpi_algorithms_text({kBytes, 4096}, 4), "rabenseifner (1.0 MiB), recursive doubling (4.0 KiB)");
}

// From one host count and its benches, mpi's buckets are counted as the benches of the runs' link
// count Open MPI's exchanges: its eager ones both ways at once where the ring's bench fills the
// link (0.4 Gbit/s on a 400 Mbit link), in turn where it does not (the same bench on 4 Gbit), and
// the fit says which. Benches that timed no MPI_Allreduce leave the count in turn.
TEST(RunFit, MpiFromOneHostCountCountsEagerExchangesAsTheBenchesOfItsLinkDo) {
  const auto line = [](double bytes, int n) { return 2 * (n - 1) * (kAlpha + bytes / n / kBeta); };
  nlohmann::json rows = nlohmann::json::array();
  for (double bytes = 65536; bytes <= 4 << 20; bytes *= 2) {
    rows.push_back({{"bytes", bytes}, {"ring", {{"time_us", 1e6 * line(bytes, 2)}}},
                    {"mpi", {{"time_us", 2e6 * line(bytes, 2)}}}});
  }
  for (const auto& [link, link_bound] : {std::pair{"400mbit", true}, std::pair{"4gbit", false}}) {
    const FittedConstants benches = testing::benches_from(testing::allreduce_bench(rows), link);
    FitRun run = rabenseifner_run(2, 2, 2.0 * kBytes);
    run.measured.link = link;
    const RunFit fit = fit_on_runs({run}, &benches);
    EXPECT_EQ(fit.allreduce.schedule,
              link_bound ? AllreduceSchedule::OpenMpiTunedLinkBound : AllreduceSchedule::OpenMpiTuned) << link;
    const bool says = std::any_of(fit.notes.begin(), fit.notes.end(), [](const std::string& note) {
      return note.find("eager limit counted both ways at once") != std::string::npos;
    });
    EXPECT_EQ(says, link_bound) << link << ": " << fmt::format("{}", fmt::join(fit.notes, "; "));
  }
  // Runs at two host counts beside benches that timed no MPI_Allreduce: counted in turn, no error.
  nlohmann::json ring_rows = rows;
  for (auto& row : ring_rows) row.erase("mpi");
  const FittedConstants ring_only = testing::benches_from(testing::allreduce_bench(ring_rows), "400mbit");
  FitRun two = rabenseifner_run(2, 2, 2.0 * kBytes), three = rabenseifner_run(3, 5, 4.5 * kBytes);
  two.measured.link = three.measured.link = "400mbit";
  EXPECT_EQ(fit_on_runs({two, three}, &ring_only).allreduce.schedule, AllreduceSchedule::OpenMpiTuned);
}

TEST(RunFit, BucketsGrowingFasterThanALineInBytesFitALatencyAlone) {
  // One bucket size, 1 ms at 2 workers and 8 ms at 3: 1/beta would come out negative. Through the
  // origin on 2(N-1) ring steps: alpha = (2 x 1 + 4 x 8) / (4 + 16) ms = 1.7 ms.
  FitRun two = allreduce_run(2), three = allreduce_run(3);
  two.last_bucket_wait_s = three.last_bucket_wait_s = 0;
  two.pieces.front().end_s = two.pieces.front().start_s + 0.001;
  three.pieces.front().end_s = three.pieces.front().start_s + 0.008;
  const RunFit fit = fit_on_runs({two, three}, nullptr);
  EXPECT_NEAR(fit.allreduce.alpha_s, 0.0017, 1e-12);
  EXPECT_NEAR(allreduce_seconds(kBytes, 4, fit.allreduce), 6 * 0.0017, 1e-12);
  // The note says why, in the least squares' own words.
  const std::string notes = fmt::format("{}", fmt::join(fit.notes, "\n"));
  EXPECT_NE(notes.find("no bandwidth term: no line in bytes follows the buckets' times at 2, 3 workers (allreduce "
                       "fit: the fit gives no bandwidth"),
            std::string::npos)
      << notes;
}

TEST(RunFit, ParameterServersRecoverTheirTermsAndPredictFourWorkersAsByHand) {
  const RunFit sync = fit_on_runs({server_run("ps-sync", 2), server_run("ps-sync", 3)}, nullptr);
  EXPECT_NEAR(sync.transfer.a, kT0, 1e-9);
  EXPECT_NEAR(sync.transfer.b, kT1, 1e-9);
  EXPECT_NEAR(sync.servers.a, kR0, 1e-9);
  EXPECT_NEAR(sync.servers.b, kR1, 1e-9);
  // By hand at 4: 28.75 ms compute (slowest of 4), push + pull 2 + 6 x 3/4 = 6.5 ms, rest 1 + 6 = 7 ms.
  EXPECT_NEAR(predict_from_runs(sync, 4).step.step_s, 0.02875 + 0.0065 + 0.007, 1e-9);
  // Async waits for no one: the mean compute, 20 ms.
  const RunFit async = fit_on_runs({server_run("ps-async", 2), server_run("ps-async", 3)}, nullptr);
  const RunFitStep four = predict_from_runs(async, 4);
  EXPECT_NEAR(four.step.step_s, 0.020 + 0.0065 + 0.007, 1e-9);
  EXPECT_DOUBLE_EQ(four.straggler_s, 0.0);
  EXPECT_DOUBLE_EQ(four.step.staleness, 3.0);
}

// Bucketed pushes run partly under backward: the step holds less than push + pull, and the rest of
// the round comes out below 0 (here -6 + 1.5 N ms). The two terms together still give each run its
// step and carry the line on to 4; held at 0 by itself, the rest would add back what backward hid.
TEST(RunFit, ServersWhosePushesRanUnderBackwardKeepTheirRestBelowZero) {
  const auto bucketed_run = [](int n) {
    FitRun run = server_run("ps-sync", n);
    const double moved = kT0 + kT1 * (n - 1.0) / n, rest = -0.006 + 0.0015 * n;
    run.step_s = slowest_of(n) + moved + rest;
    return run;
  };
  const RunFit fit = fit_on_runs({bucketed_run(2), bucketed_run(3)}, nullptr);
  EXPECT_NEAR(fit.servers.a, -0.006, 1e-9);
  for (const OwnRunCheck& own : fit.own_runs) EXPECT_NEAR(own.error(), 0.0, 1e-9) << own.workers << " workers";
  EXPECT_NEAR(predict_from_runs(fit, 4).step.step_s, bucketed_run(4).step_s, 1e-9);
}

// On hosts that take turns on one machine's cores every worker's bytes pass through those cores,
// so a worker's push and pull grow with N (here 2 + 3 N ms), and the fit follows N where it
// follows (N-1)/N for hosts of their own — which, through the same two runs, falls short at 4 —
// and for emulated hosts that each hold a quota the machine's cores can give all at once; and N
// again where the pieces are small enough for a call to each shard to set the time.
TEST(RunFit, ServersOnTimeSlicedCoresGrowTheirTransferWithTheWorkers) {
  const auto shared_run = [](int n, int cores, bool time_sliced) {
    FitRun run = server_run("ps-sync", n);
    const double moved = 0.002 + 0.003 * n, rest = kR0 + kR1 * n;
    run.pieces = {{.what = "push", .index = -1, .start_s = 0.0, .end_s = moved / 2},
                  {.what = "wait for servers", .index = -1, .start_s = moved / 2, .end_s = moved / 2 + rest},
                  {.what = "pull", .index = -1, .start_s = moved / 2 + rest, .end_s = moved + rest}};
    run.transfer_s = moved;
    run.step_s = slowest_of(n) + moved + rest;
    run.measured.shared_cores = cores;
    run.measured.hosts_time_sliced = time_sliced;
    return run;
  };
  const double by_hand = 0.02875 + (0.002 + 0.003 * 4) + kR0 + kR1 * 4;
  const RunFit sliced = fit_on_runs({shared_run(2, 2, true), shared_run(3, 2, true)}, nullptr);
  EXPECT_NEAR(predict_from_runs(sliced, 4).step.step_s, by_hand, 1e-9);
  EXPECT_NE(sliced.transfer.how.find("N (the hosts took turns on 2 cores)"), std::string::npos) << sliced.transfer.how;
  const RunFit own = fit_on_runs({shared_run(2, 0, false), shared_run(3, 0, false)}, nullptr);
  EXPECT_NEAR(predict_from_runs(own, 4).step.step_s, by_hand - 0.0015, 1e-9);  // 12.5 ms of push and pull, not 14
  EXPECT_EQ(own.transfer.how.find("quota"), std::string::npos) << own.transfer.how;
  const RunFit quota = fit_on_runs({shared_run(2, 2, false), shared_run(3, 2, false)}, nullptr);
  EXPECT_NEAR(predict_from_runs(quota, 4).step.step_s, by_hand - 0.0015, 1e-9);
  EXPECT_NE(quota.transfer.how.find("(N-1)/N (each host's quota of the shared cores its own)"), std::string::npos)
      << quota.transfer.how;
  // One run that took turns among quota'd ones: not every byte crossed shared cores, (N-1)/N.
  const RunFit mixed = fit_on_runs({shared_run(2, 2, true), shared_run(3, 2, false)}, nullptr);
  EXPECT_NEAR(predict_from_runs(mixed, 4).step.step_s, by_hand - 0.0015, 1e-9);
  // A gradient whose pieces are under a MiB a shard (LeNet-5's 248 KB): a call to each shard sets
  // the time, which grows with N on hosts of their own too.
  auto small = [&](int n) {
    FitRun run = shared_run(n, 0, false);
    run.measured.workload.bucket_bytes = {248024}, run.measured.workload.gradient_bytes = 248024;
    return run;
  };
  const RunFit calls = fit_on_runs({small(2), small(3)}, nullptr);
  EXPECT_NEAR(predict_from_runs(calls, 4).step.step_s, by_hand, 1e-9);
  EXPECT_NE(calls.transfer.how.find("N (a call to each shard: pieces under 1024 KiB)"), std::string::npos)
      << calls.transfer.how;
  // 2 MiB over a shard beside each of 3 workers is small; over the one shard the runs' server
  // files count, it is not.
  auto two_mib = [&](int n, int shards) {
    FitRun run = shared_run(n, 0, false);
    run.measured.workload.bucket_bytes = {2 << 20}, run.measured.workload.gradient_bytes = 2 << 20;
    if (shards > 0) run.measured.servers = ServerCosts{.shards = shards, .largest_share = 1.0 / shards};
    return run;
  };
  EXPECT_NEAR(predict_from_runs(fit_on_runs({two_mib(2, 0), two_mib(3, 0)}, nullptr), 4).step.step_s, by_hand, 1e-9);
  EXPECT_NEAR(predict_from_runs(fit_on_runs({two_mib(2, 1), two_mib(3, 1)}, nullptr), 4).step.step_s,
              by_hand - 0.0015, 1e-9);
}

// Every term is fitted on the runs, so the fit reproduces them where they follow its terms in N; a
// run whose step does not (here the 2-worker one 30 % slower than its compute, buckets and delays
// say) is missed at both host counts, and the output says so with a warning.
TEST(RunFit, SaysHowFarItMissesTheRunsItWasFittedOn) {
  const RunFit fit = fit_on_runs({allreduce_run(2), allreduce_run(3)}, nullptr);
  ASSERT_EQ(fit.own_runs.size(), 2u);
  for (const OwnRunCheck& check : fit.own_runs) {
    EXPECT_NEAR(check.measured_s, allreduce_run(check.workers).step_s, 1e-12);
    EXPECT_NEAR(check.fitted_s, predict_from_runs(fit, check.workers).step.step_s, 1e-12);
    EXPECT_LT(std::abs(check.error()), 0.01) << check.workers << " workers";  // the delays' distance from their mean
  }
  const std::string quiet = render_text(run_fit_table(fit, run_fit_rows(fit, {4})));
  EXPECT_NE(quiet.find("on its own runs: 2 workers"), std::string::npos) << quiet;
  EXPECT_EQ(quiet.find("warning"), std::string::npos) << quiet;

  FitRun slow = allreduce_run(2);
  slow.step_s *= 1.3;
  const RunFit missed = fit_on_runs({slow, allreduce_run(3)}, nullptr);
  ASSERT_EQ(missed.own_runs.size(), 2u);
  EXPECT_LT(missed.own_runs[0].error(), -kOwnRunTolerance);  // the delays' mean cannot follow one run
  EXPECT_GT(missed.own_runs[1].error(), kOwnRunTolerance);
  const std::string warned = render_text(run_fit_table(missed, run_fit_rows(missed, {4})));
  EXPECT_NE(warned.find("warning: the fit misses its own runs by up to"), std::string::npos) << warned;
  EXPECT_EQ(run_fit_json(missed, run_fit_rows(missed, {4}))["own_runs"][0]["workers"], 2);
}

}  // namespace
}  // namespace dtbench
