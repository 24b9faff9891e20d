#include "launch/blueprint/run_name.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

namespace dtbench {

namespace {
std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}
}  // namespace

std::string data_set_name(const DataBlueprint& data) {
  if (data.format != "idx") return data.format;
  // The folder, not the whole path: "/data/mnist-extra/fashion" is Fashion-MNIST, whatever holds it.
  const std::filesystem::path path(data.path);
  const std::string folder = lower((path.has_filename() ? path : path.parent_path()).filename().string());
  if (folder.find("fashion") != std::string::npos) return "fashion-mnist";
  if (folder.find("mnist") != std::string::npos) return "mnist";
  return "idx";
}

std::string run_name(const Blueprint& bp) {
  std::string name = fmt::format("{}-{}", bp.model, data_set_name(bp.data));
  if (bp.engine != "dtbench") name += "-" + bp.engine;
  name += "-" + bp.transport;
  if (bp.device != "cpu") name += "-" + bp.device;
  return name;
}

}  // namespace dtbench
