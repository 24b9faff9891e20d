// The scaling view from hand-built runs: speed-up and efficiency against one worker, or against a
// transport's fewest workers when no one-worker run is there; nothing without two worker counts;
// straggler runs left out.
#include <gtest/gtest.h>

#include "launch/report/scaling_charts.h"

namespace dtbench {
namespace {

RunRecord run(const std::string& transport, int world, double images_per_second) {
  RunRecord r;
  r.status = "complete";
  r.transport = transport;
  r.world = world;
  r.images_per_second = images_per_second;
  r.context.parameters = 1000;
  return r;
}

const ScalingPoint* find(const std::vector<ScalingPoint>& points, const std::string& transport, int world) {
  for (const auto& p : points) {
    if (p.transport == transport && p.world == world) return &p;
  }
  return nullptr;
}

TEST(Scaling, AgainstOneWorker) {
  const auto points = scaling_points({run("none", 1, 100), run("ring", 2, 180), run("ring", 4, 300),
                                      run("ps-sync", 4, 200), run("ps-sync", 4, 240)});
  ASSERT_EQ(points.size(), 3u);
  const ScalingPoint* ring4 = find(points, "ring", 4);
  ASSERT_NE(ring4, nullptr);
  EXPECT_DOUBLE_EQ(ring4->speedup, 3.0);
  EXPECT_DOUBLE_EQ(ring4->efficiency, 0.75);
  EXPECT_EQ(ring4->yardstick_world, 1);
  const ScalingPoint* ps4 = find(points, "ps-sync", 4);  // the median of 200 and 240
  ASSERT_NE(ps4, nullptr);
  EXPECT_DOUBLE_EQ(ps4->speedup, 2.2);
  EXPECT_EQ(scaling_charts({run("none", 1, 100), run("ring", 2, 180)}).size(), 3u);
}

TEST(Scaling, AgainstTheFewestWorkersOfEachTransport) {
  const auto points = scaling_points({run("ring", 2, 200), run("ring", 4, 360), run("mpi", 2, 100), run("mpi", 8, 200)});
  const ScalingPoint* ring4 = find(points, "ring", 4);
  ASSERT_NE(ring4, nullptr);
  EXPECT_DOUBLE_EQ(ring4->speedup, 1.8);
  EXPECT_DOUBLE_EQ(ring4->efficiency, 0.9);  // 1.8x for twice the workers
  const ScalingPoint* mpi8 = find(points, "mpi", 8);
  ASSERT_NE(mpi8, nullptr);
  EXPECT_DOUBLE_EQ(mpi8->efficiency, 0.5);
  EXPECT_EQ(mpi8->yardstick_world, 2);
}

TEST(Scaling, NothingWithOneWorkerCountOrOnlyStragglersBesideIt) {
  EXPECT_TRUE(scaling_points({run("ring", 2, 200), run("mpi", 2, 100)}).empty());
  RunRecord slow = run("ring", 4, 100);
  slow.context.straggler_rank = 1;
  slow.context.straggler_delay_ms = 20;
  EXPECT_TRUE(scaling_points({run("ring", 2, 200), slow}).empty());
  EXPECT_TRUE(scaling_charts({run("ring", 2, 200)}).empty());
}

}  // namespace
}  // namespace dtbench
