#pragma once
// Overlapping communication with backward, for every transport: backward reports each parameter
// whose gradient is done; once every parameter of a bucket (bucket_plan.h) is, the bucket is
// ready and a communication thread hands it to the transport's `communicate` (reduce it, push and
// pull it, ...) in the order they became ready, while backward goes on with earlier layers (as
// PyTorch DDP, Horovod and BytePS do). At the end of the step the transport waits for all of them;
// what it still waits for then is the exposed communication.
//
// `lanes` communication threads take buckets off the queue: one for collectives, which every rank
// must start in the same order (a second allreduce begun beside the first could pair with another
// rank's other bucket); as many as there are buckets where each bucket is a call of its own to a
// peer of its own (a parameter-server shard), so that every bucket goes as soon as it is ready and
// none waits for another's round trip — the buckets then share the links both ways, as BytePS's
// partitions do, instead of every worker sending to one server at a time.
//
//   backward thread:        gradient_ready(param) ─▶ bucket's count drops ─▶ 0: prepare(bucket),
//                                                                             queue it
//   communication threads:  queue ─▶ communicate(bucket) ─▶ done (its times noted)
//   training thread:        wait_all() ─▶ every bucket done: counts reset for the next step
//
// The first exception a `communicate` throws is kept: the step's remaining buckets are not handed
// over (only counted done), and wait_all rethrows it, in this step and every later one (the
// transport is then in an unknown state). stop() ends the threads after the buckets in hand;
// buckets still queued are dropped, and a wait_all then fails instead of waiting for them.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "comm/bucket_plan.h"

namespace dtbench {

// When one bucket became ready (its last parameter done, before `prepare`), and when
// `communicate` started and ended with it.
struct BucketTimes {
  int bucket = -1;
  std::chrono::steady_clock::time_point ready, start, end;
};

class BucketPipeline {
 public:
  using Handler = std::function<void(int bucket)>;
  // `communicate` runs on the pipeline's own threads, `lanes` of them (at least 1), on as many
  // buckets at once; `prepare` (optional) on the thread that reports the bucket's last parameter,
  // before the bucket is queued (a device's gradients copied to the host, say).
  BucketPipeline(BucketPlan plan, Handler communicate, Handler prepare = {}, int lanes = 1);
  ~BucketPipeline();
  BucketPipeline(const BucketPipeline&) = delete;
  BucketPipeline& operator=(const BucketPipeline&) = delete;

  const BucketPlan& plan() const { return plan_; }
  // Backward has finished this parameter's gradient (one not in the plan's arena is ignored).
  void gradient_ready(const Param& param);
  void gradient_ready(int param);
  // Blocks until every bucket of the step has been communicated, readies the counts for the next
  // step and returns the buckets' times in the order they were done (valid until the next call).
  // Rethrows a failure of `communicate`; throws IoError when stopped before all were done.
  std::span<const BucketTimes> wait_all();
  // Ends the communication threads once the buckets in hand (if any) are done. Idempotent.
  void stop();

 private:
  void run();

  const BucketPlan plan_;
  const Handler communicate_;
  const Handler prepare_;
  std::vector<int> pending_;  // parameters of each bucket still in backward; the backward thread's
  std::vector<int> empty_;  // buckets of no parameter: handed over by wait_all, at the step's end
  std::vector<BucketTimes> taken_;  // the last step's, as wait_all returned them

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::deque<BucketTimes> queue_;  // ready buckets, with when each became ready
  std::vector<BucketTimes> done_;  // this step's buckets so far, in the order done
  bool stopping_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

}  // namespace dtbench
