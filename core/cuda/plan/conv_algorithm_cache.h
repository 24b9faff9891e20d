#pragma once
// cuDNN's algorithm search runs every candidate algorithm, so it is done once per convolution
// shape and direction and remembered: the layers of a ResNet stage that share a shape share one
// search. Plain C++ (no CUDA), so its keying is tested on the CPU.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace dtbench::cuda_plan {

enum class ConvDirection { Forward, BackwardData, BackwardFilter };

struct ConvShape {
  int64_t batch, in_channels, height, width;
  int64_t out_channels, kernel, stride, padding;
  auto tie() const { return std::tie(batch, in_channels, height, width, out_channels, kernel, stride, padding); }
  bool operator<(const ConvShape& other) const { return tie() < other.tie(); }
  bool operator==(const ConvShape& other) const { return tie() == other.tie(); }
};

// What the search picked: the algorithm (cuDNN's enum value) and the workspace it needs.
struct ConvChoice {
  int algorithm = 0;
  int64_t workspace_bytes = 0;
};

class ConvAlgorithmCache {
 public:
  using Search = std::function<ConvChoice()>;
  // The choice for this shape and direction: the cached one, or `search`'s (run only then).
  ConvChoice choose(ConvDirection direction, const ConvShape& shape, const Search& search) {
    const auto key = std::make_pair(direction, shape);
    const auto found = choices_.find(key);
    if (found != choices_.end()) return found->second;
    ++searches_;
    return choices_.emplace(key, search()).first->second;
  }
  int64_t searches() const { return searches_; }
  // Every choice, ordered by direction and shape: "forward n4 c64 32x32 -> 128 k3 s1 p1: <name>
  // (algorithm 1), workspace 0 B", the name from `algorithm_name` (cuDNN's enum, by direction).
  std::vector<std::string> lines(const std::function<std::string(ConvDirection, int)>& algorithm_name) const;
  size_t size() const { return choices_.size(); }

 private:
  std::map<std::pair<ConvDirection, ConvShape>, ConvChoice> choices_;
  int64_t searches_ = 0;
};

}  // namespace dtbench::cuda_plan
