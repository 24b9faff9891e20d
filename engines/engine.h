#pragma once
// An engine trains one rank's steps of a blueprint: dtbench's own Trainer (engines/dtbench/) or a
// PyTorch worker process (engines/pytorch/). `dtbench train` joins the run, builds the model and
// loaders, opens the run directory and keeps the reports; it asks the engine — looked up by the
// blueprint's `engine:` name (engine_table.h) — what differs: the transport dtbench's side
// synchronises through, the training of the epochs, the provenance line, who saves the weights.
// Every engine hands back the same EpochResults, so run directories and reports never ask which
// engine made them.
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "comm/control_channel.h"
#include "comm/transport.h"
#include "core/data/dataset.h"
#include "core/data/loader.h"
#include "core/models/model.h"
#include "core/train/trainer.h"
#include "launch/blueprint/blueprint.h"

namespace dtbench {

// What one rank's engine is handed to train with, and where its results go.
struct EngineRun {
  const Blueprint& bp;
  Model& model;                 // built and initialised from the blueprint: parameters, first weights
  const Dataset& train_data;    // its size and normalisation
  Loader& train;
  Loader* test = nullptr;
  Transport& transport;         // made from Engine::transport's name
  ControlChannel& channel;      // the run's ranks
  int local_world = 0;          // workers on this host under mpirun; 0 without mpirun
  int threads = 1;              // BLAS threads per worker
  std::filesystem::path run_dir;
  nlohmann::json& provenance;   // the run summary's provenance.engine: who trained, with what
  double& autotune_seconds;     // start-up spent searching algorithms before the first step
  std::function<bool()> stop_requested;          // before every step: a signal, or another rank's failure
  std::function<void()> training_started;        // every worker is ready: the run's time starts now
  std::function<void(const EpochResult&)> epoch_done;  // after each epoch, on every rank together
  std::function<void(pid_t)> count_as_own;       // a process whose CPU time is this worker's
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;
  // The transport dtbench's side of a rank synchronises through: the blueprint's, or the local one
  // where the engine synchronises its gradients itself.
  virtual std::string transport(const Blueprint& bp) const = 0;
  // Trains the rank's epochs, handing each to run.epoch_done; a failure throws.
  virtual void train(EngineRun& run) const = 0;
  // Who trained, for the results' heading line, from the provenance train() recorded.
  virtual std::string provenance_line(const nlohmann::json& provenance) const = 0;
  // Whether dtbench writes weights.bin from the model's arena (save_weights); an engine that trains
  // elsewhere saves the weights itself.
  virtual bool dtbench_saves_weights() const = 0;
};

}  // namespace dtbench
