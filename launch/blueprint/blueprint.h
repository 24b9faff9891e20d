#pragma once
// launch/blueprint — reading what the user declares: experiment blueprints (YAML, with the
// built-in default) and shape options such as --input 3x32x32.
// May include: core only.
// Experiment blueprints (Rysia-style YAML): what to train, on what, for how long, through which
// transport. Every key is checked: an unknown key, a wrong type or an out-of-range value is an
// InputError naming the file, the key and what is accepted.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "comm/transport_catalogue.h"
#include "core/optim/optimizer.h"

namespace dtbench {

struct DataBlueprint {
  std::string format = "idx";  // idx | cifar10 | cifar100
  std::string path = "/usr/share/datasets/fashion-mnist";
  bool cache = true;     // decode the whole set into memory once
  bool augment = false;  // random crop with padding + horizontal flip (CIFAR)
  int64_t resize = 0;    // > 0: resize samples to resize × resize (AlexNet takes 64)
};

// How workers exchange gradients (allreduce transports; the parameter servers add their own).
struct CommBlueprint {
  double bucket_mb = 25.0;   // gradient bucket size; 0: the whole arena as one fused buffer
  bool overlap = true;       // reduce buckets while backward is still running
  int64_t chunk_kb = 0;      // ring: pipelining unit of each segment; 0: chosen per path
  std::string ring_path = "auto";  // ring: auto (shared memory within one host) | shm | messages
  double timeout_s = 60.0;   // a peer silent this long ends the run with an error
  std::string iface;         // network interface for MPI's TCP traffic (btl_tcp_if_include)
};

// Parameter servers (transport ps-sync / ps-async; `dtbench ps` reads the same section).
struct PsBlueprint {
  std::vector<std::string> servers;  // host:port in shard order ("a:1,b:2" or a YAML list)
  std::string placement = "balanced";  // balanced | hash: how keys are dealt to the servers
  int64_t key_kb = 256;           // largest key; bigger parameters are cut into keys of this size
  double timeout_s = 60.0;        // sync: a missing worker fails the step; calls give up after this
  int64_t retries = 4;            // further attempts of a call to a server that is unreachable
  int64_t max_staleness = 0;      // async: a worker this many pushes ahead waits; 0: unbounded
  int64_t checkpoint_every = 0;   // servers: checkpoint every this many updates; 0: at shutdown only
  std::string run_id;             // servers refuse workers of another run; empty: the blueprint's name
  std::string auth_token_file;    // shared token, sent with (and required on) every call
  std::string tls_ca;             // PEM CA that signed the servers' certificates: connect with TLS
  std::string tls_cert;           // worker certificate and key, for servers that require one
  std::string tls_key;
};

// An injected straggler, so a sweep can measure how each transport suffers a slow worker: worker
// `rank` sleeps `delay_ms` in every step's compute. rank -1: none.
struct StragglerBlueprint {
  int64_t rank = -1;
  double delay_ms = 0.0;
};

// The PyTorch engine's own settings (engine: pytorch; pytorch/parity.py says what each sets).
struct PytorchBlueprint {
  std::string profile = "matched";  // matched (dtbench's threads, loader, zeroing, fp32) | defaults (PyTorch's own)
  std::string ddp_hook = "timed";   // timed (each bucket timed by a Python hook) | builtin (DDP's own allreduce)
};

struct Blueprint {
  std::string name = "run";
  std::string model = "lenet5";
  DataBlueprint data;
  int64_t epochs = 1;
  int64_t steps = 0;  // total step limit; 0: whole epochs
  int64_t batch = 64;  // per worker
  OptimizerConfig optimizer;
  uint64_t seed = 1;
  int threads = 0;  // BLAS threads; 0: one per core
  std::string device = "cpu";  // cpu | cuda (the GPU by local rank); core/device/device.h
  std::string precision = "fp32";  // fp32 | tf32 (a GPU's tensor cores; the cpu has fp32 only)
  // The host's convolution algorithms: measured per shape before the first step (core/tuning/) |
  // rules (the fixed choice, as before measuring existed).
  std::string conv_algorithms = "measured";
  std::string transport{kLocalTransport};
  // Who trains: dtbench's own engine, or PyTorch (a Python worker per rank, pytorch/README.md),
  // whose transports are none and ddp (DistributedDataParallel over gloo).
  std::string engine = "dtbench";
  PytorchBlueprint pytorch;
  CommBlueprint comm;
  PsBlueprint ps;
  StragglerBlueprint straggler;
  bool save_weights = false;  // write the final weights to weights.bin in the run directory
  bool time_operators = false;  // profile.operators: forward/backward time per operator kind
  bool device_marks = true;     // profile.device_marks: a GPU's phases timed by events on its queue
  int64_t trace_steps = 200;    // profile.trace_steps: trace-<rank>.json of each epoch's first N steps; 0: off
  int64_t eval_max_samples = 0; // eval.max_samples: evaluate on at most this many test samples; 0: all
  std::string output = "runs";

  std::string source;  // where it came from, for messages
  YAML::Node resolved;  // the blueprint as resolved (overrides applied), for the run directory
};

// The blueprint compiled into dtbench: LeNet-5 on the real Fashion-MNIST, one epoch.
std::string_view default_blueprint_text();

// Parses YAML text (`source` names it in errors), applies `key=value` overrides with dotted keys
// ("optimizer.lr=0.1", "dataset.path=/data"), and validates everything.
Blueprint parse_blueprint(const std::string& text, const std::string& source,
                          const std::vector<std::string>& overrides);
Blueprint load_blueprint(const std::string& path, const std::vector<std::string>& overrides);

// The resolved blueprint as JSON for report.json: scalars typed as YAML would read them.
nlohmann::json blueprint_json(const YAML::Node& node);

}  // namespace dtbench
