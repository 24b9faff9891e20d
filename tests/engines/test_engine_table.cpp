// The engine table: each engine `engine:` may name, found by its name, answering what
// `dtbench train` asks of it; an unknown name is an InputError naming the choices.
#include <gtest/gtest.h>

#include "comm/transport_catalogue.h"
#include "core/util/error.h"
#include "engines/engine_table.h"
#include "launch/blueprint/blueprint.h"

namespace dtbench {
namespace {

TEST(EngineTable, EveryEngineIsFoundByItsName) {
  EXPECT_EQ(engine_names(), (std::vector<std::string>{"dtbench", "pytorch"}));
  for (const auto& name : engine_names()) EXPECT_EQ(engine_named(name).name(), name);
}

TEST(EngineTable, AnUnknownEngineIsAnInputErrorNamingTheChoices) {
  try {
    engine_named("tensorflow");
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(), "engine 'tensorflow' is not known; choose one of dtbench, pytorch");
  }
}

TEST(EngineTable, DtbenchSynchronisesThroughTheBlueprintsTransportAndSavesTheWeights) {
  const Blueprint bp = parse_blueprint("model: mlp\ntransport: ring\n", "t.yaml", {});
  const Engine& engine = engine_named(bp.engine);
  EXPECT_EQ(engine.name(), "dtbench");
  EXPECT_EQ(engine.transport(bp), "ring");
  EXPECT_TRUE(engine.dtbench_saves_weights());
  EXPECT_NE(engine.provenance_line({}).find("BLAS core"), std::string::npos);
}

TEST(EngineTable, PytorchKeepsTheLocalTransportAndSavesItsOwnWeights) {
  const Blueprint bp = parse_blueprint("model: mlp\nengine: pytorch\ntransport: ddp\n", "t.yaml", {});
  const Engine& engine = engine_named(bp.engine);
  EXPECT_EQ(engine.transport(bp), kLocalTransport);
  EXPECT_FALSE(engine.dtbench_saves_weights());
  EXPECT_EQ(engine.provenance_line({{"torch", "2.1"}, {"settings", "matched"}}), "engine pytorch 2.1 [matched]");
}

}  // namespace
}  // namespace dtbench
