#pragma once
// `nccl`: the gradient arena (on the device: `device: cuda`) averaged by one ncclAllReduce per
// step on the transport's own stream, then each rank's optimizer, as `mpi` does on the CPU. The
// initial weights come from rank 0 by ncclBroadcast; at the end every rank compares its weights'
// checksum over MPI. Waits poll the stream against the deadline and abort the communicator when
// it passes, so a dead peer ends the run instead of hanging it.
#include <mpi.h>
#include <nccl.h>

#include <cuda_runtime.h>

#include "allreduce/nccl/register.h"
#include "comm/transport.h"

namespace dtbench {

class NcclTransport final : public LocalUpdateTransport {
 public:
  NcclTransport(OptimizerConfig optimizer, NcclTransportOptions options);
  ~NcclTransport() override;

  std::string name() const override { return "nccl"; }
  void start(Model& model) override;
  void stop(Model& model) override;
  nlohmann::json summary() const override { return summary_; }

 protected:
  void synchronize(Model& model, int64_t step, SyncTimes& times) override;
  bool synchronizes_on_host() const override { return false; }  // NCCL reduces on the device

 private:
  // Waits for the stream; IoError naming `what` after the deadline or a stop.
  void wait(const std::string& what);

  NcclTransportOptions options_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int world_ = 1;
  ncclComm_t nccl_ = nullptr;
  cudaStream_t stream_ = nullptr;
  nlohmann::json summary_;
};

}  // namespace dtbench
