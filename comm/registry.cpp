#include "comm/registry.h"

#include <algorithm>
#include <map>

#include <fmt/ranges.h>

#include "comm/local_transport.h"
#include "comm/transport_catalogue.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

std::map<std::string, TransportFactory>& factories() {
  static std::map<std::string, TransportFactory> table = {
      {std::string(kLocalTransport), [](const TransportContext& context) -> std::unique_ptr<Transport> {
         return std::make_unique<LocalTransport>(context.optimizer);
       }}};
  return table;
}

}  // namespace

const std::vector<std::string>& known_transports() {
  static const std::vector<std::string> names = transport_names();
  return names;
}

std::vector<std::string> built_transports() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

void register_transport(const std::string& name, TransportFactory factory) {
  // A transport without a row would be one that no launcher, report or sweep knows how to treat.
  DTB_CHECK(find_transport_row(name) != nullptr, "transport '{}' has no row in comm/transport_catalogue.cpp", name);
  factories()[name] = std::move(factory);
}

std::unique_ptr<Transport> make_transport(const std::string& name, const TransportContext& context) {
  auto found = factories().find(name);
  if (found != factories().end()) return found->second(context);
  const auto& known = known_transports();
  if (std::find(known.begin(), known.end(), name) != known.end()) {
    fail_input("transport '{}' is not built into this dtbench; built: {}", name,
               fmt::join(built_transports(), ", "));
  }
  fail_input("transport '{}' is not known; choose one of {}", name, fmt::join(known, ", "));
}

}  // namespace dtbench
