#include "paramserver/register.h"

#include "comm/registry.h"
#include "comm/transport_catalogue.h"
#include "core/optim/optimizer_settings.h"
#include "core/util/error.h"
#include "paramserver/ps_channel.h"

namespace dtbench {

void register_ps_transports(const PsTransportOptions& options) {
  for (PsMode mode : {PsMode::Sync, PsMode::Async}) {
    register_transport(std::string(mode == PsMode::Sync ? kPsSyncTransport : kPsAsyncTransport), [options, mode](const TransportContext& context) {
      PsTransportOptions chosen = options;
      chosen.mode = mode;
      chosen.optimizer = optimizer_settings(context.optimizer);
      return std::unique_ptr<Transport>(std::make_unique<PsTransport>(chosen));
    });
  }
}

std::unique_ptr<ControlChannel> make_ps_channel(const PsTransportOptions& options, int rank, int world) {
  if (options.servers.empty()) fail_input("parameter-server workers need ps.servers=host:port[,...]");
  return std::make_unique<PsControlChannel>(connection_options(client_options(options, rank, world), 0), options.run_id,
                                            rank, world,
                                            options.timeout_seconds);
}

}  // namespace dtbench
