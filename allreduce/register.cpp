#include "allreduce/register.h"

#include "comm/registry.h"

namespace dtbench {

void register_allreduce_transports(const AllreduceTransportOptions& options) {
  for (AllreduceAlgorithm algorithm : {AllreduceAlgorithm::Ring, AllreduceAlgorithm::Mpi}) {
    register_transport(std::string(algorithm_name(algorithm)), [options, algorithm](const TransportContext& context) {
      AllreduceTransportOptions chosen = options;
      chosen.algorithm = algorithm;
      return std::unique_ptr<Transport>(std::make_unique<AllreduceTransport>(context.optimizer, chosen));
    });
  }
}

}  // namespace dtbench
