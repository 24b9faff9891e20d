#include "comm/transport_catalogue.h"

#include <fmt/ranges.h>

#include "core/util/error.h"

namespace dtbench {

const std::vector<TransportRow>& transport_catalogue() {
  // The chart colours keep the order the reports have always drawn: ring, mpi, ps-sync, ps-async,
  // none, then nccl.
  static const std::vector<TransportRow> rows = {
      {kLocalTransport, TransportFamily::Local, Launcher::Alone, true, 4},
      {kRingTransport, TransportFamily::MpiAllreduce, Launcher::Mpirun, true, 0},
      {kMpiTransport, TransportFamily::MpiAllreduce, Launcher::Mpirun, true, 1},
      {kNcclTransport, TransportFamily::Nccl, Launcher::Mpirun, true, 5},
      {kPsSyncTransport, TransportFamily::ParameterServer, Launcher::MpirunWithServers, true,
       2},
      {kPsAsyncTransport, TransportFamily::ParameterServer, Launcher::MpirunWithServers, false,
       3},
  };
  return rows;
}

const TransportRow* find_transport_row(std::string_view name) {
  for (const auto& row : transport_catalogue()) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

const TransportRow& transport_row(std::string_view name) {
  if (const TransportRow* row = find_transport_row(name)) return *row;
  fail_input("transport '{}' is not known; choose one of {}", name, fmt::join(transport_names(), ", "));
}

bool exchanges_nothing(std::string_view name) {
  const TransportRow* row = find_transport_row(name);
  return row != nullptr && row->family == TransportFamily::Local;
}

std::vector<std::string> transport_names() {
  return transport_names_where([](const TransportRow&) { return true; });
}

}  // namespace dtbench
