#pragma once
// `nccl`: the gradient arena (on the device: `device: cuda`) averaged by one ncclAllReduce per
// step on the communicator's own stream (nccl_communicator.h: bounded waits), then each rank's
// optimizer, as `mpi` does on the CPU. The initial weights come from rank 0 by ncclBroadcast; at
// the end every rank compares its weights' checksum over MPI.
#include <memory>

#include "allreduce/nccl/nccl_communicator.h"
#include "allreduce/nccl/register.h"
#include "comm/transport.h"
#include "comm/transport_catalogue.h"

namespace dtbench {

class NcclTransport final : public LocalUpdateTransport {
 public:
  NcclTransport(OptimizerConfig optimizer, NcclTransportOptions options);

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
};

}  // namespace dtbench
