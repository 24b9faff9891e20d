// The check of `bench allreduce --transport nccl` (launch/bench/nccl_check.h) with stand-ins for
// the device buffers: at one rank, where a sum is its input, a sum that writes nothing or writes
// into its input fails it, and so does a sum over several ranks that loses one; a right sum passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "launch/bench/nccl_check.h"

namespace dtbench {
namespace {

// Host vectors in place of device memory; `world` ranks whose inputs are fill_allreduce_pattern's
// (this one's is what was uploaded).
class StandInBuffer : public NcclBenchBuffer {
 public:
  enum class Sum { Right, Nothing, InPlace, LosesARank };
  StandInBuffer(Sum how, int rank, int world) : how_(how), rank_(rank), world_(world) {}

  void fill_zeros(int64_t count) override {
    input_.assign(static_cast<size_t>(count), 0.0f);
    result_.assign(static_cast<size_t>(count), 0.0f);
  }
  void poison_result(int64_t count) override {
    result_.resize(std::max(result_.size(), static_cast<size_t>(count)));
    std::fill_n(result_.begin(), count, std::numeric_limits<float>::quiet_NaN());
  }
  void upload(std::span<const float> values) override { input_.assign(values.begin(), values.end()); }
  void download(std::span<float> values) override {
    std::copy_n(result_.begin(), values.size(), values.begin());
  }
  void sum(int64_t count) override {
    if (how_ == Sum::Nothing) return;
    std::vector<float> total(input_.begin(), input_.begin() + count);  // this rank's part
    const int others = how_ == Sum::LosesARank ? world_ - 2 : world_ - 1;
    for (int r = 0, added = 0; r < world_ && added < others; ++r) {
      if (r == rank_) continue;
      std::vector<float> theirs(static_cast<size_t>(count));
      fill_allreduce_pattern(theirs, r, world_);
      for (size_t i = 0; i < theirs.size(); ++i) total[i] += theirs[i];
      ++added;
    }
    std::vector<float>& into = how_ == Sum::InPlace ? input_ : result_;
    std::copy(total.begin(), total.end(), into.begin());
  }
  int nccl_version() const override { return 0; }

 private:
  Sum how_;
  int rank_, world_;
  std::vector<float> input_, result_;
};

int64_t wrong_after(StandInBuffer::Sum how, int rank, int world, int64_t count) {
  StandInBuffer nccl(how, rank, world);
  nccl.fill_zeros(count);
  std::vector<float> host(static_cast<size_t>(count), 0.0f);
  return check_nccl_sum(nccl, host, rank, world).wrong_count;
}

TEST(NcclCheck, AtOneRankASumThatWritesNothingOrIntoItsInputFails) {
  for (const int64_t count : {1, 7, 1000}) {
    EXPECT_EQ(wrong_after(StandInBuffer::Sum::Right, 0, 1, count), 0) << count;
    EXPECT_EQ(wrong_after(StandInBuffer::Sum::Nothing, 0, 1, count), count) << count;
    EXPECT_EQ(wrong_after(StandInBuffer::Sum::InPlace, 0, 1, count), count) << count;
  }
}

TEST(NcclCheck, OverSeveralRanksEveryRankSeesTheSumAndALostRankFails) {
  for (const int world : {2, 3, 5}) {
    for (int rank = 0; rank < world; ++rank) {
      EXPECT_EQ(wrong_after(StandInBuffer::Sum::Right, rank, world, 600), 0) << rank << " of " << world;
      EXPECT_EQ(wrong_after(StandInBuffer::Sum::LosesARank, rank, world, 600), 600) << rank << " of " << world;
      EXPECT_EQ(wrong_after(StandInBuffer::Sum::Nothing, rank, world, 600), 600) << rank << " of " << world;
    }
  }
}

}  // namespace
}  // namespace dtbench
