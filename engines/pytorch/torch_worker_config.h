#pragma once
// What `dtbench train` tells a PyTorch worker (engine: pytorch; engines/pytorch/torch_worker.h):
// the blueprint as pytorch/README.md's config.json, and where DDP's process group meets.
#include <string>

#include <nlohmann/json.hpp>

#include "core/models/model.h"
#include "engines/pytorch/torch_worker.h"
#include "launch/blueprint/blueprint.h"

namespace dtbench {

// config.json for worker `rank` of `world` (the data's normalisation is added by TorchWorker).
nlohmann::json torch_worker_config(const Blueprint& bp, const Model& model, int rank, int world, int threads,
                                   const std::string& init_method, const std::string& save_weights_path);

// Worker `rank`'s PyTorch process in run directory `run_dir`: its input folder pytorch-<rank>,
// the interpreter and worker found as torch_worker.h says, rank 0 saving the final weights when the
// blueprint asks.
TorchWorkerSetup torch_worker_setup(const Blueprint& bp, const Model& model, const Dataset& train, int rank,
                                    int world, int threads, const std::string& init_method,
                                    const std::filesystem::path& run_dir);

// "tcp://ADDRESS:PORT" for DDP's rendezvous at this host (rank 0's): loopback when every worker is
// here, else the address of `iface` (comm.iface) or of the first interface up that is not loopback;
// the port is one the kernel hands out free now.
std::string ddp_rendezvous(const std::string& iface, bool every_worker_here);

// The interface this worker's gloo connections use (its config's `iface`): comm.iface when set,
// else the one the kernel routes through towards the rendezvous of `init_method`. gloo left to
// itself takes the address the host name resolves to, which on an emulated host is loopback, so
// its peers on other hosts would be told to connect to 127.0.0.1. Empty: no rendezvous.
std::string ddp_interface(const std::string& iface, const std::string& init_method);

}  // namespace dtbench
