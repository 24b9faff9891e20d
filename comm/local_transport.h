#pragma once
#include "comm/transport.h"

namespace dtbench {

// One worker, nothing to exchange: the gradients are already the ones to apply.
class LocalTransport : public LocalUpdateTransport {
 public:
  using LocalUpdateTransport::LocalUpdateTransport;
  std::string name() const override { return "none"; }
  void start(Model&) override {}
  void stop(Model&) override {}

 protected:
  void synchronize(Model&, int64_t, SyncTimes&) override {}
};

}  // namespace dtbench
