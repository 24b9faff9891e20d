#include "core/models/conv_choices.h"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/layers/conv2d.h"

namespace dtbench {

namespace {

// "winograd 16, gemm 3, lanes 1": how many layers use each algorithm, most used first.
std::string counts_text(const std::vector<LayerConvChoice>& choices, bool forward) {
  std::map<ConvAlgorithm, int> counts;
  for (const LayerConvChoice& choice : choices) ++counts[forward ? choice.tuning.forward : choice.tuning.backward];
  std::vector<std::pair<ConvAlgorithm, int>> ordered(counts.begin(), counts.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (const auto& [algorithm, count] : ordered) {
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", conv_algorithm_name(algorithm), count);
  }
  return text;
}

bool any_measured(const std::vector<LayerConvChoice>& choices) {
  return std::any_of(choices.begin(), choices.end(), [](const LayerConvChoice& c) { return c.measured; });
}

}  // namespace

std::vector<LayerConvChoice> conv_choices(const Model& model, int64_t batch) {
  std::vector<LayerConvChoice> choices;
  for (size_t i = 0; i < model.leaf_layers().size(); ++i) {
    const auto* conv = dynamic_cast<const Conv2d*>(model.leaf_layers()[i]);
    if (conv == nullptr) continue;
    LayerConvChoice choice{.layer = model.layers()[i].path, .sizes = conv->sizes(batch), .measured = false, .tuning = {}};
    if (const auto tuned = conv->tunings().find(batch); tuned != conv->tunings().end()) {
      choice.measured = true;
      choice.tuning = tuned->second;
    } else {
      const ConvAlgorithm rule = rule_choice(choice.sizes);
      choice.tuning = {.forward = rule, .backward = rule, .rule = rule, .trials = {}, .from_cache = false};
    }
    choices.push_back(std::move(choice));
  }
  return choices;
}

std::string conv_choices_summary(const std::vector<LayerConvChoice>& choices) {
  if (choices.empty()) return "";
  const auto off_rules = std::count_if(choices.begin(), choices.end(), [](const LayerConvChoice& c) {
    return c.tuning.forward != c.tuning.rule || c.tuning.backward != c.tuning.rule;
  });
  std::string text = fmt::format("{}: forward {}; backward {}", any_measured(choices) ? "measured" : "rules",
                                 counts_text(choices, true), counts_text(choices, false));
  if (any_measured(choices)) text += fmt::format("; {} of {} layers off the rules", off_rules, choices.size());
  return text;
}

nlohmann::json conv_choices_json(const std::vector<LayerConvChoice>& choices) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerConvChoice& c : choices) {
    layers.push_back({{"layer", c.layer},
                      {"shape", conv_shape_text(c.sizes)},
                      {"forward", conv_algorithm_name(c.tuning.forward)},
                      {"backward", conv_algorithm_name(c.tuning.backward)},
                      {"rule", conv_algorithm_name(c.tuning.rule)}});
  }
  return {{"choice", any_measured(choices) ? "measured" : "rules"},
          {"summary", conv_choices_summary(choices)},
          {"layers", layers}};
}

}  // namespace dtbench
