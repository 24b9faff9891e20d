#include "engines/engine_table.h"

#include <memory>

#include <fmt/ranges.h>

#include "core/util/error.h"
#include "engines/dtbench/dtbench_engine.h"
#include "engines/pytorch/pytorch_engine.h"

namespace dtbench {

namespace {

const std::vector<std::unique_ptr<Engine>>& engines() {
  static const std::vector<std::unique_ptr<Engine>> table = [] {
    std::vector<std::unique_ptr<Engine>> rows;
    rows.push_back(std::make_unique<DtbenchEngine>());
    rows.push_back(std::make_unique<PytorchEngine>());
    return rows;
  }();
  return table;
}

}  // namespace

const Engine& engine_named(std::string_view name) {
  for (const auto& engine : engines()) {
    if (engine->name() == name) return *engine;
  }
  fail_input("engine '{}' is not known; choose one of {}", name, fmt::join(engine_names(), ", "));
}

std::vector<std::string> engine_names() {
  std::vector<std::string> names;
  for (const auto& engine : engines()) names.emplace_back(engine->name());
  return names;
}

}  // namespace dtbench
