// dtbench ps: one parameter-server shard. It builds the blueprint's model exactly as a worker does
// (same data set shape, seed and initialisation), keeps the keys its shard owns, and serves them
// until every worker has said goodbye, a Shutdown call, or SIGINT / SIGTERM; then it writes
// server-<shard>.json and a checkpoint into --output (and, as it goes, trace-server-<shard>.json
// with its first --trace-updates updates, which `dtbench report --traces DIR` merges). A run that
// cannot go on (a sync worker missing past the timeout, no worker heard from for --idle-timeout-s)
// ends it with an error and a non-zero exit. Without a token it makes one: <output>/ps.token.
//
//   dtbench ps --listen 127.0.0.1:50051 --shard 0 --shards 2 --workers 4 --mode sync --config X
#include <csignal>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "comm/transport_catalogue.h"
#include "core/data/open_dataset.h"
#include "core/models/models.h"
#include "core/util/blas.h"
#include "core/util/error.h"
#include "launch/blueprint/blueprint.h"
#include "launch/blueprint/number_option.h"
#include "launch/commands.h"
#include "paramserver/parameter_server.h"
#include "paramserver/security.h"

namespace dtbench {

namespace {

// The servers' mode when --mode does not say: the blueprint's transport's, synchronous unless its row is not.
bool asynchronous(const Blueprint& bp) {
  const TransportRow* row = find_transport_row(bp.transport);
  return row != nullptr && row->parameter_server() && !row->synchronous;
}

volatile std::sig_atomic_t ps_stop_signal = 0;

void request_ps_stop(int signal) { ps_stop_signal = signal; }

struct PsCommandOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string listen = "127.0.0.1:50051";
  int shard = 0;
  int shards = 0;   // 0: the number of ps.servers, or 1
  int workers = 1;
  std::string mode;  // "": from the blueprint's transport
  std::string run_id;
  double timeout_s = 0;  // 0: ps.timeout_s
  double idle_timeout_s = 300;
  bool insecure = false;
  int64_t checkpoint_every = -1;  // -1: ps.checkpoint_every
  int64_t max_staleness = -1;     // -1: ps.max_staleness
  bool drop_missing_workers = false;
  std::string checkpoint;
  bool no_checkpoint = false;
  std::string restore;
  std::string output;
  int64_t trace_updates = 200;
  std::string auth_token;
  std::string auth_token_file;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
};

Blueprint resolve(const PsCommandOptions& options) {
  if (options.config.empty()) {
    return parse_blueprint(std::string(default_blueprint_text()), "built-in blueprint", options.overrides);
  }
  return load_blueprint(options.config, options.overrides);
}

// The model a worker of this blueprint trains, initialised from its seed. Only the data set's
// headers are read, for the sample shape and the classes.
std::unique_ptr<Model> build_model(const Blueprint& bp) {
  const DatasetPair data = open_dataset({bp.data.format, bp.data.path, /*cache=*/false});
  Shape sample_shape = data.train->sample_shape();
  if (bp.data.resize > 0) sample_shape = {sample_shape[0], bp.data.resize, bp.data.resize};
  auto model = models::build(bp.model, sample_shape, data.train->classes());
  model->initialize(bp.seed);
  return model;
}

ParameterServerOptions server_options(const PsCommandOptions& options, const Blueprint& bp) {
  ParameterServerOptions server;
  server.listen = options.listen;
  server.shard = options.shard;
  server.worker_count = options.workers;
  server.mode = parse_mode(!options.mode.empty() ? options.mode : asynchronous(bp) ? "async" : "sync");
  server.run_id = !options.run_id.empty() ? options.run_id : bp.ps.run_id;
  server.timeout_seconds = options.timeout_s > 0 ? options.timeout_s : bp.ps.timeout_s;
  server.idle_timeout_seconds = options.idle_timeout_s;
  server.max_staleness = options.max_staleness >= 0 ? options.max_staleness : bp.ps.max_staleness;
  server.drop_missing_workers = options.drop_missing_workers;
  server.checkpoint_every = options.checkpoint_every >= 0 ? options.checkpoint_every : bp.ps.checkpoint_every;
  server.checkpoint_path = options.checkpoint;
  server.checkpoints = !options.no_checkpoint;
  if (options.no_checkpoint && (!options.checkpoint.empty() || options.checkpoint_every > 0)) {
    fail_input("--no-checkpoint contradicts --checkpoint / --checkpoint-every: give one or the other");
  }
  server.restore_path = options.restore;
  server.trace_updates = options.trace_updates;
  server.output_dir = !options.output.empty()
                          ? options.output
                          : (std::filesystem::path(bp.output) / fmt::format("ps-{}", server.run_id)).string();
  const int shards = options.shards > 0 ? options.shards : std::max<int>(1, static_cast<int>(bp.ps.servers.size()));
  server.placement = {shards, bp.ps.key_kb * 1024 / static_cast<int64_t>(sizeof(float)), parse_placement(bp.ps.placement)};
  if (!options.auth_token.empty() && !options.auth_token_file.empty()) {
    fail_input("give --auth-token or --auth-token-file, not both");
  }
  if (!options.auth_token.empty()) {
    spdlog::warn("--auth-token puts the token on the command line, where any local user can read it (ps, "
                 "/proc/<pid>/cmdline); prefer --auth-token-file FILE (mode 0600)");
  }
  const std::string token_file = !options.auth_token_file.empty() ? options.auth_token_file : bp.ps.auth_token_file;
  server.security.auth_token = !options.auth_token.empty() ? options.auth_token
                               : token_file.empty()        ? ""
                                                           : read_token_file(token_file);
  server.security.insecure = options.insecure;
  server.security.tls_cert_file = options.tls_cert;
  server.security.tls_key_file = options.tls_key;
  server.security.tls_client_ca_file = options.tls_client_ca;
  return server;
}

void run_server(const PsCommandOptions& options) {
  const Blueprint bp = resolve(options);
  blas::set_threads(bp.threads > 0 ? bp.threads : 1);
  auto model = build_model(bp);
  ParameterServer server(model->arena(), bp.optimizer, server_options(options, bp));
  // The bound address on stdout, for scripts that asked for port 0.
  fmt::print("dtbench ps: shard {} listening on {}\n", options.shard, server.address());
  std::fflush(stdout);
  std::signal(SIGINT, request_ps_stop);
  std::signal(SIGTERM, request_ps_stop);
  while (!server.wait_for(0.2)) {
    if (ps_stop_signal != 0) {
      spdlog::info("shard {}: signal {}, stopping", options.shard, static_cast<int>(ps_stop_signal));
      break;
    }
  }
  server.stop();
  if (const std::string failure = server.failure(); !failure.empty()) {
    throw IoError(fmt::format("parameter server {}: {} (at version {})", server.address(), failure, server.version()));
  }
  spdlog::info("shard {}: stopped at version {}", options.shard, server.version());
}

}  // namespace

PsTransportOptions ps_transport_options(const Blueprint& bp, int rank, int world) {
  PsTransportOptions options;
  options.servers = bp.ps.servers;
  options.mode = asynchronous(bp) ? PsMode::Async : PsMode::Sync;
  options.rank = rank;
  options.world = world;
  options.run_id = bp.ps.run_id.empty() ? bp.name : bp.ps.run_id;
  options.placement = parse_placement(bp.ps.placement);
  options.key_float_count = bp.ps.key_kb * 1024 / static_cast<int64_t>(sizeof(float));
  options.timeout_seconds = bp.ps.timeout_s;
  options.retries = static_cast<int>(bp.ps.retries);
  // The allreduce transports' buckets: on for the servers too, a shard pushed as backward ends it.
  options.bucket_bytes = static_cast<int64_t>(bp.comm.bucket_mb * (1 << 20));
  options.overlap = bp.comm.overlap;
  if (!bp.ps.auth_token_file.empty()) options.security.auth_token = read_token_file(bp.ps.auth_token_file);
  options.security.tls_ca_file = bp.ps.tls_ca;
  options.security.tls_cert_file = bp.ps.tls_cert;
  options.security.tls_key_file = bp.ps.tls_key;
  return options;
}

void add_ps_command(CLI::App& app) {
  auto* command = app.add_subcommand("ps", "Run one parameter-server shard for ps-sync / ps-async workers");
  auto o = std::make_shared<PsCommandOptions>();
  command->add_option("--config", o->config, "Blueprint YAML: the model, seed and optimizer the workers use");
  command->add_option("--set", o->overrides, "Override a blueprint key: --set optimizer.lr=0.1");
  command->add_option("--listen", o->listen, "host:port to serve on (port 0: any free port)")->capture_default_str();
  command->add_option("--shard", o->shard, "This server's shard, 0 .. shards-1")->capture_default_str();
  command->add_option("--shards", o->shards, "Number of servers (default: the number of ps.servers, or 1)");
  command->add_option("--workers", o->workers, "Number of workers in the run")->capture_default_str();
  command->add_option("--mode", o->mode, "sync | async (default: from the blueprint's transport)")
      ->check(CLI::IsMember({"sync", "async"}));
  command->add_option("--run-id", o->run_id, "Refuse workers of another run (default: ps.run_id, or the name)");
  command->add_option("--timeout-s", o->timeout_s, "Sync: fail a step a worker misses for this long (default ps.timeout_s)");
  command->add_option("--checkpoint-every", o->checkpoint_every, "Checkpoint every N updates (default ps.checkpoint_every)");
  command->add_option("--checkpoint", o->checkpoint, "Checkpoint file (default: <output>/server-<shard>.ckpt)");
  command->add_flag("--no-checkpoint", o->no_checkpoint, "Write no checkpoint, not even at shutdown (benchmarks)");
  command->add_option("--restore", o->restore, "Start from this checkpoint, at its version");
  command->add_option("--max-staleness", o->max_staleness, "Async: hold a worker this many pushes ahead (0: unbounded)");
  command->add_flag("--drop-missing-workers", o->drop_missing_workers,
                    "Sync: go on without a worker missing past the timeout instead of failing the step");
  command->add_option("--output", o->output, "Directory for server-<shard>.json (default: <output>/ps-<run id>)");
  command->add_option("--trace-updates", o->trace_updates,
                      "Timeline of the first N updates: trace-server-<shard>.json in --output (0: none)")
      ->capture_default_str()
      ->check(non_negative_number());
  command->add_option("--idle-timeout-s", o->idle_timeout_s,
                      "End, failed, when no worker has been heard from for this long (died or never came)")
      ->capture_default_str()
      ->check(positive_number());
  command->add_option("--auth-token", o->auth_token, "Require this token on every call (visible in ps: prefer a file)");
  command->add_option("--auth-token-file", o->auth_token_file,
                      "Require the token in this file (mode 0600) on every call (default: ps.auth_token_file, or a "
                      "fresh token in <output>/ps.token)");
  command->add_flag("--insecure", o->insecure, "Serve without a token: any process that reaches the port may call");
  command->add_option("--tls-cert", o->tls_cert, "Serve TLS with this PEM certificate");
  command->add_option("--tls-key", o->tls_key, "... and this PEM private key");
  command->add_option("--tls-client-ca", o->tls_client_ca, "Require client certificates signed by this PEM CA");
  command->callback([o] { run_server(*o); });
}

}  // namespace dtbench
