#pragma once
// Adds `ps-sync` and `ps-async` to comm/'s transport registry, and makes the control channel of
// parameter-server workers (which need no MPI). Called by the command line.
#include <memory>

#include "comm/control_channel.h"
#include "paramserver/ps_transport.h"

namespace dtbench {

// options.mode is set per name; options.rank / world are this worker's.
void register_ps_transports(const PsTransportOptions& options);
// Collectives through shard 0 (options.servers[0]).
std::unique_ptr<ControlChannel> make_ps_channel(const PsTransportOptions& options, int rank, int world);

}  // namespace dtbench
