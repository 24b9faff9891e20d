#pragma once
#include "comm/transport.h"
#include "comm/transport_catalogue.h"

namespace dtbench {

// One worker, nothing to exchange: the gradients are already the ones to apply.
class LocalTransport : public LocalUpdateTransport {
 public:
  using LocalUpdateTransport::LocalUpdateTransport;
  std::string name() const override { return std::string(kLocalTransport); }

 protected:
  void begin(Model&) override {}
  void end(Model&) override {}
  void synchronize(Model&, int64_t, SyncTimes&) override {}
  // Nothing is exchanged, so nothing needs the host: a model on a device updates there.
  bool synchronizes_on_host() const override { return false; }
};

}  // namespace dtbench
