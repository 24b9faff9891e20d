// An optimizer's settings as text: equal exactly when two configs update alike, and where two differ
// named key by key, as a parameter server and its workers compare them.
#include <gtest/gtest.h>

#include <cmath>

#include "core/optim/optimizer_settings.h"

namespace dtbench {
namespace {

TEST(OptimizerSettings, SayTheBlueprintKeysTheOptimizerUses) {
  const OptimizerConfig sgd{.name = "sgd", .learning_rate = 0.05f, .momentum = 0.9f, .weight_decay = 1e-4f};
  EXPECT_EQ(optimizer_settings(sgd),
            "optimizer.name=sgd optimizer.lr=0.05 optimizer.momentum=0.9 optimizer.weight_decay=0.0001 "
            "optimizer.nesterov=false");
  const OptimizerConfig adam{.name = "adam", .learning_rate = 1e-3f};
  EXPECT_EQ(optimizer_settings(adam),
            "optimizer.name=adam optimizer.lr=0.001 optimizer.beta1=0.9 optimizer.beta2=0.999 optimizer.epsilon=1e-08 "
            "optimizer.weight_decay=0");
  // What an optimizer does not read does not tell two configs apart: adam has no momentum.
  OptimizerConfig adam_with_momentum = adam;
  adam_with_momentum.momentum = 0.5f;
  EXPECT_EQ(optimizer_settings(adam_with_momentum), optimizer_settings(adam));
  // Every setting it reads does, down to the float's last bit.
  OptimizerConfig nudged = sgd;
  nudged.learning_rate = std::nextafter(sgd.learning_rate, 1.0f);
  EXPECT_NE(optimizer_settings(nudged), optimizer_settings(sgd));
  nudged = sgd;
  nudged.nesterov = true;
  EXPECT_NE(optimizer_settings(nudged), optimizer_settings(sgd));
}

TEST(OptimizerSettings, ADifferenceNamesEachKeyAndBothValues) {
  const OptimizerConfig server{.name = "sgd", .learning_rate = 0.02f, .momentum = 0.9f};
  const OptimizerConfig worker{.name = "sgd", .learning_rate = 0.5f, .momentum = 0.9f};
  EXPECT_EQ(optimizer_settings_difference(optimizer_settings(server), "on the server", optimizer_settings(worker),
                                          "here"),
            "optimizer.lr 0.02 on the server, 0.5 here");
  EXPECT_EQ(optimizer_settings_difference(optimizer_settings(server), "there", optimizer_settings(server), "here"), "");
  // Another optimizer: every key either reads, the other's marked unset.
  const std::string adam = optimizer_settings({.name = "adam", .learning_rate = 0.02f});
  const std::string difference = optimizer_settings_difference(optimizer_settings(server), "a", adam, "b");
  EXPECT_NE(difference.find("optimizer.name sgd a, adam b"), std::string::npos) << difference;
  EXPECT_NE(difference.find("optimizer.momentum 0.9 a, unset b"), std::string::npos) << difference;
  EXPECT_NE(difference.find("optimizer.beta1 unset a, 0.9 b"), std::string::npos) << difference;
  EXPECT_EQ(difference.find("optimizer.lr"), std::string::npos) << "the same learning rate is no difference";
}

}  // namespace
}  // namespace dtbench
