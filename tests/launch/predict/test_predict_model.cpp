// The cost model: one worker alone is its measured compute, the figures move the way they must
// with the workers and the link, and overlap and incast come out as worked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "core/util/error.h"
#include "launch/predict/cost_model.h"
#include "launch/predict/prediction.h"

namespace dtbench {
namespace {

constexpr PredictTransport kAll[] = {PredictTransport::Ring, PredictTransport::Mpi, PredictTransport::PsSync,
                                     PredictTransport::PsAsync};

Workload workload(bool overlap) {
  Workload w;
  w.compute = {.load_s = 0.001, .forward_s = 0.02, .backward_s = 0.04, .update_s = 0.005, .other_s = 0.002};
  w.bucket_bytes = {4 << 20, 4 << 20, 2 << 20};
  w.gradient_bytes = 10 << 20;
  w.overlap = overlap;
  return w;
}

NetworkConstants link(double gbit) {
  return {.alpha_s = 50e-6, .beta_bytes_per_s = gbit * 1e9 / 8, .reduce_s_per_byte = 0.3e-9, .apply_s_per_byte = 1e-9};
}

TEST(PredictModel, OneWorkerIsItsMeasuredCompute) {
  const Workload w = workload(true);
  for (PredictTransport t : kAll) {
    const StepPrediction p = predict_step(t, w, 1, {}, link(1));
    EXPECT_DOUBLE_EQ(p.step_s, 0.001 + 0.02 + 0.04 + 0.005 + 0.002) << transport_name(t);
    EXPECT_DOUBLE_EQ(p.comm_exposed_s, 0.0) << transport_name(t);
  }
}

// A ratio of training to bench measured at one rank count (a fit on 2 hosts and their benches)
// holds under Open MPI's schedule where the link limits only on the same side of two ranks (one
// connection for every exchange, or several) and where the library takes the same algorithm; where
// the link does not limit, everywhere. Our ring's steps are the same at every N, so there it holds
// everywhere.
TEST(PredictModel, ARatioMeasuredAtOneRankCountHoldsOnlyWhereOpenMpiRunsAlike) {
  Workload w;
  w.compute = {.backward_s = 0.01};
  const int64_t bucket = 25 << 20, count = bucket / 4;
  w.bucket_bytes = {bucket};
  w.gradient_bytes = bucket;
  const auto choice = [&](int n) { return open_mpi_allreduce_choice(n, bucket, count); };
  ASSERT_EQ(choice(3), choice(4));  // Rabenseifner's, at 2 as well
  NetworkConstants bench = link(1);
  bench.schedule = AllreduceSchedule::OpenMpiTunedLinkBound;
  const auto comm = [&](const NetworkConstants& c, int n) {
    return predict_step(PredictTransport::Mpi, w, n, {}, c).comm_total_s;
  };
  NetworkConstants from_two = bench;
  from_two.comm_scale = 0.8;
  from_two.comm_scale_workers = 2;
  EXPECT_NEAR(comm(from_two, 2), 0.8 * comm(bench, 2), 1e-12);
  EXPECT_NEAR(comm(from_two, 3), comm(bench, 3), 1e-12);
  EXPECT_NEAR(comm(from_two, 4), comm(bench, 4), 1e-12);
  NetworkConstants from_three = from_two;
  from_three.comm_scale_workers = 3;
  EXPECT_NEAR(comm(from_three, 4), 0.8 * comm(bench, 4), 1e-12);
  EXPECT_NEAR(comm(from_three, 2), comm(bench, 2), 1e-12);
  for (int n = 5; n <= 64; ++n) {  // where the library switches algorithm, the ratio goes
    const double expected = choice(n) == choice(3) ? 0.8 * comm(bench, n) : comm(bench, n);
    EXPECT_NEAR(comm(from_three, n), expected, 1e-12) << n << " ranks";
  }
  // Without a rank count of its own (calibrated at the run's N) it holds everywhere, and so it
  // does for the ring.
  NetworkConstants everywhere = from_two;
  everywhere.comm_scale_workers = 0;
  EXPECT_NEAR(comm(everywhere, 3), 0.8 * comm(bench, 3), 1e-12);
  // Where the link does not limit, the ratio is the hosts' CPU beside training: it holds at 3 and 4.
  NetworkConstants cpu_bound = bench, cpu_bound_from_two = from_two;
  cpu_bound.schedule = cpu_bound_from_two.schedule = AllreduceSchedule::OpenMpiTuned;
  for (int n : {2, 3, 4}) {
    EXPECT_NEAR(comm(cpu_bound_from_two, n), 0.8 * comm(cpu_bound, n), 1e-12) << n << " ranks";
  }
  NetworkConstants ring = link(1), ring_from_two = link(1);
  ring_from_two.comm_scale = 0.8;
  ring_from_two.comm_scale_workers = 2;
  EXPECT_NEAR(predict_step(PredictTransport::Ring, w, 3, {}, ring_from_two).comm_total_s,
              0.8 * predict_step(PredictTransport::Ring, w, 3, {}, ring).comm_total_s, 1e-12);
}

// With a fixed number of shards: with one per worker, more workers also spread the servers' work.
TEST(PredictModel, StepGrowsWithWorkersAndShrinksWithTheLink) {
  for (bool overlap : {false, true}) {
    const Workload w = workload(overlap);
    for (PredictTransport t : kAll) {
      for (ServerLayout layout : {ServerLayout{.shards = 1}, ServerLayout{.shards = 2, .beside_workers = false}}) {
        double previous = 0;
        for (int n = 1; n <= 1024; n *= 2) {
          const double slow = predict_step(t, w, n, layout, link(1)).step_s;
          const double fast = predict_step(t, w, n, layout, link(100)).step_s;
          EXPECT_GE(slow, previous) << transport_name(t) << " at " << n << " workers";
          EXPECT_LE(fast, slow) << transport_name(t) << " at " << n << " workers";
          previous = slow;
        }
      }
    }
  }
}

// Between the sizes measured at the same rank count, the time is read off the measured curve (at a
// measured size exactly, between two the geometric mean at the geometric middle); beyond them (by
// more than 1 %), or for other rank counts, the fitted line.
TEST(PredictModel, AllreduceReadsTheMeasuredCurveWithinItsSizes) {
  NetworkConstants c = link(10);
  const double line_at_8 = allreduce_seconds(8 << 20, 2, c), line_at_1_on_3 = allreduce_seconds(1 << 20, 3, c);
  c.curve = {{1 << 20, 0.002}, {4 << 20, 0.008}};
  c.curve_workers = 2;
  EXPECT_DOUBLE_EQ(allreduce_seconds(1 << 20, 2, c), 0.002);
  EXPECT_DOUBLE_EQ(allreduce_seconds(4 << 20, 2, c), 0.008);
  EXPECT_NEAR(allreduce_seconds(2 << 20, 2, c), std::sqrt(0.002 * 0.008), 1e-12);
  // Within 1 % beyond an end (a run's buckets padded to alignment), the end's time.
  EXPECT_DOUBLE_EQ(allreduce_seconds((4 << 20) + 4000, 2, c), 0.008);
  EXPECT_DOUBLE_EQ(allreduce_seconds((1 << 20) - 1000, 2, c), 0.002);
  EXPECT_DOUBLE_EQ(allreduce_seconds(8 << 20, 2, c), line_at_8);
  EXPECT_DOUBLE_EQ(allreduce_seconds(1 << 20, 3, c), line_at_1_on_3);
  EXPECT_EQ(allreduce_seconds(1 << 20, 1, c), 0.0);
}

TEST(PredictModel, RingAllreduceByHand) {
  // 4 workers, 8 MiB: 6 steps of alpha + 2 MiB / beta, and 3/4 of the bytes summed.
  const NetworkConstants c = link(10);
  const double expected = 6 * (50e-6 + (2 << 20) / 1.25e9) + 0.75 * (8 << 20) * 0.3e-9;
  EXPECT_NEAR(allreduce_seconds(8 << 20, 4, c), expected, 1e-12);
  EXPECT_EQ(allreduce_seconds(8 << 20, 1, c), 0.0);
}

TEST(PredictModel, OverlapHidesWhatBackwardCovers) {
  Workload w = workload(false);
  w.bucket_bytes = {5 << 20, 5 << 20};
  const NetworkConstants c = link(1);
  const double one = allreduce_seconds(5 << 20, 2, c);  // each bucket
  const StepPrediction after = predict_step(PredictTransport::Ring, w, 2, {}, c);
  EXPECT_NEAR(after.comm_exposed_s, 2 * one, 1e-12);
  w.overlap = true;
  // The first bucket is ready half-way through backward (0.02 s) and the second at its end.
  const StepPrediction during = predict_step(PredictTransport::Ring, w, 2, {}, c);
  const double first_done = 0.02 + one;
  const double expected = std::max(first_done, 0.04) + one - 0.04;
  EXPECT_NEAR(during.comm_exposed_s, expected, 1e-12);
  EXPECT_NEAR(during.comm_total_s, 2 * one, 1e-12);
  EXPECT_LT(during.step_s, after.step_s);
}

TEST(PredictModel, OverlapStartsEachBucketWhereTheLayersPutIt) {
  Workload w = workload(true);
  w.bucket_bytes = {5 << 20, 5 << 20};
  w.bucket_ready = {0.25, 1.0};  // the first bucket's layers are a quarter of backward's work
  const NetworkConstants c = link(1);
  const double one = allreduce_seconds(5 << 20, 2, c);
  const double expected = std::max(0.25 * 0.04 + one, 0.04) + one - 0.04;
  EXPECT_NEAR(predict_step(PredictTransport::Ring, w, 2, {}, c).comm_exposed_s, expected, 1e-12);
  // The earlier a bucket is ready, the less of it is left when backward ends.
  double previous = 0;
  for (double ready = 0; ready <= 1.0; ready += 0.125) {
    w.bucket_ready = {ready, 1.0};
    const double exposed = predict_step(PredictTransport::Ring, w, 2, {}, c).comm_exposed_s;
    EXPECT_GE(exposed, previous - 1e-15) << ready;
    previous = exposed;
  }
}

// Hosts on 2 shared cores: 8 workers push 10 MiB each through TCP at 2 ns per byte out and back,
// 4 workers to a core — 10 MiB x 1 ns x 4 one way, far above the 100 Gbit link's 7/8 x 10 MiB.
TEST(PredictModel, SharedCoresBoundTheParameterServersTransfer) {
  NetworkConstants c = link(100);
  c.cpu_s_per_byte = 2e-9;
  const int64_t s = 10 << 20;
  const ServerLayout shared{.shared_cores = 2};
  EXPECT_NEAR(ps_transfer_seconds(s, 8, shared, c), 50e-6 + s * 1e-9 * 4, 1e-12);
  EXPECT_NEAR(ps_transfer_seconds(s, 8, {}, c), 50e-6 + 7.0 / 8 * s / c.beta_bytes_per_s, 1e-12);  // own cores
  // At 1 Gbit the link is the slower: the cores change nothing.
  c.beta_bytes_per_s = 1e9 / 8;
  EXPECT_DOUBLE_EQ(ps_transfer_seconds(s, 2, shared, c), ps_transfer_seconds(s, 2, {}, c));
  // More workers on the cores, or fewer cores, never make a step faster.
  const Workload w = workload(false);
  c = link(100);
  c.cpu_s_per_byte = 2e-9;
  for (PredictTransport t : {PredictTransport::PsSync, PredictTransport::PsAsync}) {
    double previous = 0;
    for (int n = 1; n <= 64; n *= 2) {
      const double two = predict_step(t, w, n, {.shared_cores = 2}, c).step_s;
      const double eight = predict_step(t, w, n, {.shared_cores = 8}, c).step_s;
      EXPECT_GE(two, eight) << transport_name(t) << " at " << n;
      EXPECT_GE(eight, predict_step(t, w, n, {}, c).step_s) << transport_name(t) << " at " << n;
      EXPECT_GE(two, previous) << transport_name(t) << " at " << n;
      previous = two;
    }
  }
}

// On 2 cores shared by 2 workers, a bucket allreduced during backward has its TCP CPU go twice as
// slow until backward ends; checked against the bucket's progress stepped through in time.
TEST(PredictModel, SharedCoresSlowTheAllreduceThatOverlapsBackward) {
  Workload w = workload(true);
  w.bucket_bytes = {5 << 20, 5 << 20};
  w.bucket_ready = {0.0, 1.0};
  NetworkConstants c = link(1);
  c.cpu_s_per_byte = 2e-9;
  const double cost = allreduce_seconds(5 << 20, 2, c);
  const double cpu = 0.5 * 2 * (5 << 20) * 2e-9 / 2;  // 2(N-1)/N of the bucket, half the round's cost
  double t = 0, done = 0;
  const double dt = 1e-7;
  while (done < cost) {
    done += t < 0.04 ? dt * cost / (cost + cpu) : dt;  // the rate while backward runs, then alone
    t += dt;
  }
  const double expected = t + cost - 0.04;  // then the second bucket, ready when backward ends
  const ServerLayout shared{.shared_cores = 2};
  const StepPrediction slowed = predict_step(PredictTransport::Ring, w, 2, shared, c);
  EXPECT_NEAR(slowed.comm_exposed_s, expected, 1e-6);
  EXPECT_NEAR(slowed.comm_total_s, t + cost, 1e-6);  // the first bucket took t, the second its cost
  // Cores of its own, or no measured CPU: as before.
  const double alone = predict_step(PredictTransport::Ring, w, 2, {}, c).comm_exposed_s;
  EXPECT_NEAR(alone, 2 * cost - 0.04, 1e-12);
  c.cpu_s_per_byte = 0;
  EXPECT_DOUBLE_EQ(predict_step(PredictTransport::Ring, w, 2, shared, c).comm_exposed_s, alone);
  // Fewer cores never make a step faster.
  c.cpu_s_per_byte = 2e-9;
  for (int n = 2; n <= 64; n *= 2) {
    EXPECT_GE(predict_step(PredictTransport::Mpi, w, n, {.shared_cores = 2}, c).step_s,
              predict_step(PredictTransport::Mpi, w, n, {.shared_cores = 16}, c).step_s)
        << n;
  }
}

// A synchronous step ends when the slowest worker's part is in; async does not wait for it, and
// one worker alone has nobody to wait for.
TEST(PredictModel, SynchronousStepsWaitForTheSlowestWorker) {
  Workload w = workload(true);
  const NetworkConstants c = link(10);
  for (PredictTransport t : kAll) {
    for (int n : {1, 4}) {
      w.straggler_s = 0;
      const StepPrediction even = predict_step(t, w, n, {}, c);
      w.straggler_s = 0.015;
      const StepPrediction uneven = predict_step(t, w, n, {}, c);
      const double wait = n > 1 && t != PredictTransport::PsAsync ? 0.015 : 0.0;
      EXPECT_NEAR(uneven.step_s, even.step_s + wait, 1e-12) << transport_name(t) << " at " << n;
      EXPECT_NEAR(uneven.comm_exposed_s, even.comm_exposed_s + wait, 1e-12) << transport_name(t) << " at " << n;
      EXPECT_DOUBLE_EQ(uneven.compute_s, even.compute_s) << transport_name(t);
    }
  }
}

TEST(PredictModel, OneServerApartCarriesEveryWorkersBytes) {
  const NetworkConstants c = link(1);
  const ServerLayout one_apart{.shards = 1, .beside_workers = false};
  const int64_t s = 10 << 20;
  // The server's link takes 8 workers' gradients: 8 S / beta each way.
  EXPECT_NEAR(ps_transfer_seconds(s, 8, one_apart, c), 50e-6 + 8.0 * s / c.beta_bytes_per_s, 1e-12);
  // A shard beside each of 8 workers: each link carries 7/8 of S out and 7 eighths in.
  EXPECT_NEAR(ps_transfer_seconds(s, 8, {}, c), 50e-6 + 7.0 / 8 * s / c.beta_bytes_per_s, 1e-12);
}

// Async pushes do not come together: a worker's round crosses the largest shard's link with its own
// part only, and the link's load from every worker is a bound on the step instead.
TEST(PredictModel, AsyncPushesMeetAtTheServerOnlyOnAverage) {
  const NetworkConstants c = link(1);
  const ServerLayout skewed{.shards = 4, .largest_share = 0.8};  // beside the workers
  const int64_t s = 1 << 20;
  const double b = c.beta_bytes_per_s;
  // Together (sync): 3 other workers' 0.8 S at once; apart (async): one worker's 0.8 S, above its
  // own link's 3/4 S.
  EXPECT_NEAR(ps_transfer_seconds(s, 4, skewed, c, true), 50e-6 + 3 * 0.8 * s / b, 1e-12);
  EXPECT_NEAR(ps_transfer_seconds(s, 4, skewed, c, false), 50e-6 + 0.8 * s / b, 1e-12);
  Workload w;
  w.compute.backward_s = 0.001;
  w.gradient_bytes = s;
  NetworkConstants free_server = c;
  free_server.reduce_s_per_byte = free_server.apply_s_per_byte = 0;
  // Compute 1 ms + push and pull of 0.8 S (13.5 ms) against the link's 3 x 0.8 S a step (20.1 ms).
  const StepPrediction p = predict_step(PredictTransport::PsAsync, w, 4, skewed, free_server);
  EXPECT_NEAR(p.step_s, 3 * 0.8 * s / b, 1e-12);
  w.compute.backward_s = 0.010;  // now the worker's own round is the longer
  EXPECT_NEAR(predict_step(PredictTransport::PsAsync, w, 4, skewed, free_server).step_s,
              0.010 + 2 * (50e-6 + 0.8 * s / b), 1e-12);
}

// Where bench ps measured the round at N workers, each beside a shard, the parameter servers' comm
// at that N is the measured round (log-log between two sizes). Other N, or another layout, keep
// the fitted line.
TEST(PredictModel, ParameterServersReadTheMeasuredRoundAtItsWorkers) {
  NetworkConstants c = link(10);
  Workload w;
  w.compute.backward_s = 0.001;
  w.gradient_bytes = 2 << 20;
  const ServerLayout beside{};  // one shard per worker, beside it
  const StepPrediction line_at_3 = predict_step(PredictTransport::PsSync, w, 3, beside, c);
  const StepPrediction line_at_2 = predict_step(PredictTransport::PsSync, w, 2, beside, c);
  const StepPrediction line_apart = predict_step(PredictTransport::PsSync, w, 3, {.shards = 1, .beside_workers = false}, c);
  c.curve = {{1 << 20, 0.010}, {4 << 20, 0.030}};
  c.curve_workers = 3;
  const double round = std::sqrt(0.010 * 0.030);  // 2 MiB: the geometric middle of 1 and 4 MiB
  const StepPrediction sync = predict_step(PredictTransport::PsSync, w, 3, beside, c);
  EXPECT_NEAR(sync.comm_total_s, round, 1e-12);
  EXPECT_NEAR(sync.step_s, 0.001 + round, 1e-12);
  // Async reads its own rounds (bench ps against async servers) the same way.
  EXPECT_NEAR(predict_step(PredictTransport::PsAsync, w, 3, beside, c).comm_total_s, round, 1e-12);
  EXPECT_DOUBLE_EQ(predict_step(PredictTransport::PsSync, w, 2, beside, c).step_s, line_at_2.step_s);
  EXPECT_DOUBLE_EQ(predict_step(PredictTransport::PsSync, w, 3, {.shards = 1, .beside_workers = false}, c).step_s,
                   line_apart.step_s);
  EXPECT_GT(sync.step_s, line_at_3.step_s);  // the measured round here is slower than the line
}

TEST(PredictModel, AsyncNeverWaitsLongerThanSync) {
  const Workload w = workload(false);
  for (int n = 2; n <= 1024; n *= 2) {
    const StepPrediction sync = predict_step(PredictTransport::PsSync, w, n, {}, link(10));
    const StepPrediction async = predict_step(PredictTransport::PsAsync, w, n, {}, link(10));
    EXPECT_LE(async.step_s, sync.step_s + 1e-12) << n;
    EXPECT_EQ(async.staleness, n - 1);
  }
}

TEST(PredictModel, CrossoversNameTheLastAndFirstWorkerCounts) {
  auto row = [](PredictTransport t, int n, double step) {
    return PredictionRow{.transport = t, .link = "1gbit", .workers = n, .step = {.step_s = step}};
  };
  const std::vector<PredictionRow> rows = {
      row(PredictTransport::Ring, 2, 1.0),   row(PredictTransport::Ring, 4, 2.0),  row(PredictTransport::Ring, 8, 4.0),
      row(PredictTransport::PsSync, 2, 1.5), row(PredictTransport::PsSync, 4, 1.8), row(PredictTransport::PsSync, 8, 5.0)};
  const auto crossovers = find_crossovers(rows);
  ASSERT_EQ(crossovers.size(), 2u);
  EXPECT_EQ(crossovers[0].from, PredictTransport::Ring);
  EXPECT_EQ(crossovers[0].to, PredictTransport::PsSync);
  EXPECT_EQ(crossovers[0].last_workers, 2);
  EXPECT_EQ(crossovers[0].first_workers, 4);
  EXPECT_EQ(crossovers[1].to, PredictTransport::Ring);
  EXPECT_EQ(crossovers[1].first_workers, 8);
}

TEST(PredictModel, UnknownTransportAndNoWorkersAreErrors) {
  EXPECT_THROW(parse_predict_transport("nccl"), InputError);
  EXPECT_THROW(predict_step(PredictTransport::Ring, workload(true), 0, {}, link(1)), InputError);
}

}  // namespace
}  // namespace dtbench
