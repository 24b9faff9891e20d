#pragma once
// Maps the blueprint's `transport:` name to a factory. Transports register themselves from their
// own folders; asking for one that this build does not have is an InputError listing those it has.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/transport.h"

namespace dtbench {

// What a factory may need to build its transport. Grows with the transports.
struct TransportContext {
  OptimizerConfig optimizer;
};

using TransportFactory = std::function<std::unique_ptr<Transport>(const TransportContext&)>;

// Every name a blueprint may use, built or not (the catalogue's), so an error can tell the two apart.
const std::vector<std::string>& known_transports();
std::vector<std::string> built_transports();
void register_transport(const std::string& name, TransportFactory factory);
std::unique_ptr<Transport> make_transport(const std::string& name, const TransportContext& context);

}  // namespace dtbench
