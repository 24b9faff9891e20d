#pragma once
// What an error may repeat of a request: at most 64 bytes of a field, then "…". A request's field
// can be megabytes (a run id, a name), and echoed whole it pushes the status past gRPC's metadata
// limit, so the client sees "metadata size exceeds limit" instead of the real error.
#include <string>
#include <string_view>

namespace dtbench {

constexpr size_t kEchoBytes = 64;

inline std::string echo(std::string_view field) {
  if (field.size() <= kEchoBytes) return std::string(field);
  return std::string(field.substr(0, kEchoBytes)) + "…";
}

}  // namespace dtbench
