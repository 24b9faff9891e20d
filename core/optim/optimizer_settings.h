#pragma once
// An optimizer's settings as text, for processes that must update alike and live apart (a
// parameter server and its workers): each says how it updates, and a difference is named key by key.
#include <string>

#include "core/optim/optimizer.h"

namespace dtbench {

// The settings an optimizer of this config uses, as the blueprint's keys: "optimizer.name=sgd
// optimizer.lr=0.05 optimizer.momentum=0.9 optimizer.weight_decay=0 optimizer.nesterov=false" (adam:
// lr, beta1, beta2, epsilon, weight_decay). Equal exactly when two configs update alike.
std::string optimizer_settings(const OptimizerConfig& config);

// Where two such texts differ, key by key: "optimizer.lr 0.02 on the server, 0.5 here" (with
// `a_where` "on the server", `b_where` "here"); "" when they are equal.
std::string optimizer_settings_difference(const std::string& a, const std::string& a_where, const std::string& b,
                                          const std::string& b_where);

}  // namespace dtbench
