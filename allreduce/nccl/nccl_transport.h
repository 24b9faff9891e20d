#pragma once
// `nccl`: the gradient arena (on the device: `device: cuda`) averaged by one ncclAllReduce per
// step on the communicator's own stream (nccl_communicator.h: bounded waits), then each rank's
// optimizer, as `mpi` does on the CPU. The initial weights come from rank 0 by ncclBroadcast; at
// the end every rank compares its weights' checksum over MPI.
//
// With buckets and overlap, comm/'s bucket pipeline reduces each bucket (a contiguous range of the
// device arena) on its own thread as soon as backward has finished it. Backward's kernels run
// asynchronously, so the bucket's last parameter being reported means its kernels were launched,
// not done: the backward thread waits for the device before handing the bucket over.
#include <memory>
#include <vector>

#include "allreduce/nccl/nccl_communicator.h"
#include "allreduce/nccl/register.h"
#include "comm/bucket_pipeline.h"
#include "comm/transport.h"
#include "comm/transport_catalogue.h"

namespace dtbench {

class NcclTransport final : public LocalUpdateTransport {
 public:
  NcclTransport(OptimizerConfig optimizer, NcclTransportOptions options);
  ~NcclTransport() override;

  std::string name() const override { return std::string(kNcclTransport); }
  nlohmann::json summary() const override { return summary_; }

 protected:
  void begin(Model& model) override;
  void end(Model& model) override;
  void synchronize(Model& model, int64_t step, SyncTimes& times) override;
  bool synchronizes_on_host() const override { return false; }  // NCCL reduces on the device

 private:
  NcclTransportOptions options_;
  std::unique_ptr<NcclCommunicator> nccl_;
  nlohmann::json summary_;
  Model* model_ = nullptr;
  int cuda_device_ = 0;                     // the training thread's, for the pipeline's thread
  std::vector<ArenaRange> buckets_;
  std::vector<CommSpan> spans_;             // this step's bucket reductions, in the order done
  std::unique_ptr<BucketPipeline> pipeline_;  // null without overlap
};

}  // namespace dtbench
