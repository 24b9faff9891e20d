#include "core/optim/optimizer_settings.h"

#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace dtbench {

namespace {

// "key=value key=value ..." as key -> value.
std::map<std::string, std::string> settings_of(const std::string& text) {
  std::map<std::string, std::string> settings;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    const auto equals = word.find('=');
    settings[word.substr(0, equals)] = equals == std::string::npos ? "" : word.substr(equals + 1);
  }
  return settings;
}

std::string value_of(const std::map<std::string, std::string>& settings, const std::string& key) {
  const auto it = settings.find(key);
  return it == settings.end() ? std::string("unset") : it->second;
}

}  // namespace

std::string optimizer_settings(const OptimizerConfig& config) {
  if (config.name == "adam") {
    return fmt::format("optimizer.name=adam optimizer.lr={} optimizer.beta1={} optimizer.beta2={} optimizer.epsilon={} "
                       "optimizer.weight_decay={}",
                       config.learning_rate, config.beta1, config.beta2, config.epsilon, config.weight_decay);
  }
  return fmt::format("optimizer.name={} optimizer.lr={} optimizer.momentum={} optimizer.weight_decay={} "
                     "optimizer.nesterov={}",
                     config.name, config.learning_rate, config.momentum, config.weight_decay, config.nesterov);
}

std::string optimizer_settings_difference(const std::string& a, const std::string& a_where, const std::string& b,
                                          const std::string& b_where) {
  const auto settings_a = settings_of(a), settings_b = settings_of(b);
  std::map<std::string, std::string> keys = settings_a;
  keys.insert(settings_b.begin(), settings_b.end());
  std::vector<std::string> differences;
  for (const auto& [key, unused] : keys) {
    const std::string value_a = value_of(settings_a, key), value_b = value_of(settings_b, key);
    if (value_a != value_b) differences.push_back(fmt::format("{} {} {}, {} {}", key, value_a, a_where, value_b, b_where));
  }
  return fmt::format("{}", fmt::join(differences, "; "));
}

}  // namespace dtbench
