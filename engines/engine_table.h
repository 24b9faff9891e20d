#pragma once
// The engines a blueprint's `engine:` may name, each once: a new engine is a folder beside
// engines/dtbench and engines/pytorch and a row in engine_table.cpp.
#include <string>
#include <string_view>
#include <vector>

#include "engines/engine.h"

namespace dtbench {

// The engine called `name`; InputError naming the choices when there is none.
const Engine& engine_named(std::string_view name);
// Every engine's name, in the table's order.
std::vector<std::string> engine_names();

}  // namespace dtbench
