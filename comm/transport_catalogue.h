#pragma once
// The transport catalogue: one row per transport a blueprint may name, built into this dtbench or
// not. Every room that must know something of a transport — how to launch it, whether it needs
// parameter servers, whether its steps wait for every worker, what a step moves, how a report draws
// it — asks the row, never the name. (What a step moves is the cost model's, launch/predict/,
// chosen there by the row's family.) A new transport is a folder of its own that registers a
// factory (comm/registry.h) and one row here.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dtbench {

// The transports' names, for the few places that mean one transport in particular (a bench that
// runs the ring, the local transport's own name).
inline constexpr std::string_view kLocalTransport = "none";
inline constexpr std::string_view kRingTransport = "ring";
inline constexpr std::string_view kMpiTransport = "mpi";
inline constexpr std::string_view kNcclTransport = "nccl";
inline constexpr std::string_view kPsSyncTransport = "ps-sync";
inline constexpr std::string_view kPsAsyncTransport = "ps-async";

enum class TransportFamily {
  Local,            // one worker, nothing exchanged
  MpiAllreduce,     // allreduce over MPI on the host: our ring, MPI_Allreduce
  Nccl,             // allreduce on the GPU with NCCL, bootstrapped over MPI
  ParameterServer,  // workers push gradients to gRPC servers and pull the weights back
};

enum class Launcher {
  Alone,              // one process, no mpirun
  Mpirun,             // the workers under mpirun (MPI is started even for one worker)
  MpirunWithServers,  // parameter servers started beside the workers; mpirun only for several
};

struct TransportRow {
  std::string_view name;     // as a blueprint's `transport:` names it
  TransportFamily family;
  Launcher launcher;
  bool synchronous;          // a step waits for every worker's gradient
  size_t chart_colour;       // its colour index in every report's charts

  bool parameter_server() const { return family == TransportFamily::ParameterServer; }
  bool needs_servers() const { return launcher == Launcher::MpirunWithServers; }
  // Workers reach each other through MPI (an MpiSession even without mpirun).
  bool over_mpi() const { return family == TransportFamily::MpiAllreduce || family == TransportFamily::Nccl; }
};

// Every row, in the order choices are listed to a user.
const std::vector<TransportRow>& transport_catalogue();
// The row of `name`; InputError naming the choices when there is none.
const TransportRow& transport_row(std::string_view name);
// The row of `name`, or null.
const TransportRow* find_transport_row(std::string_view name);
// Whether `name` is the transport of one worker alone (a run of another engine's transport, or of
// one this build does not know, is not).
bool exchanges_nothing(std::string_view name);
// Every name, in catalogue order.
std::vector<std::string> transport_names();
// The names of the rows for which `keep` holds, in catalogue order.
template <typename Predicate>
std::vector<std::string> transport_names_where(Predicate keep) {
  std::vector<std::string> names;
  for (const auto& row : transport_catalogue()) {
    if (keep(row)) names.emplace_back(row.name);
  }
  return names;
}

}  // namespace dtbench
