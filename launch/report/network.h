#pragma once
// Where a run's ranks were and which path their traffic took: every rank's host, the emulated
// cluster if there was one (its hosts, slots and link shaping), the bytes each rank's network
// interfaces carried during the run, and, for the MPI transports, each pair of ranks with its path
// — shared memory between ranks of one host, TCP between hosts (the cluster's MCA settings allow
// nothing else).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench {

// From the workers' reports (report_json, each with provenance.hostname and network); rank 0's
// own report alone for a one-worker run.
nlohmann::json network_json(const std::vector<nlohmann::json>& worker_reports, const std::string& transport);
// A few lines for the console and report.md: hosts, cluster and link, pairs, interface traffic.
std::string network_text(const nlohmann::json& network);

}  // namespace dtbench
