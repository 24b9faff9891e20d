#pragma once
// Bytes each network interface carried while a run went on, from /proc/net/dev (which lists the
// interfaces of the process's own network namespace). It is the evidence of which path a run's
// traffic took: ranks on one host talk through shared memory and leave the interfaces quiet,
// ranks on two hosts push their gradients through eth0.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dtbench {

struct InterfaceBytes {
  uint64_t received = 0;
  uint64_t sent = 0;
};

// Interface name -> counters, from the text of /proc/net/dev; empty on text it cannot read.
std::map<std::string, InterfaceBytes> parse_net_dev(std::string_view text);

class InterfaceTraffic {
 public:
  InterfaceTraffic();  // the counters now
  // {"eth0": {"sent_bytes": ..., "received_bytes": ...}, "lo": ...} since construction; interfaces
  // that appeared since count from zero.
  nlohmann::json since_start() const;

 private:
  std::map<std::string, InterfaceBytes> start_;
};

}  // namespace dtbench
