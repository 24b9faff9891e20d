#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/models/models.h"
#include "core/util/error.h"
#include "launch/blueprint/blueprint.h"
#include "launch/sweep/plan.h"
#include "engines/pytorch/torch_worker_config.h"

namespace dtbench {
namespace {

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_blueprint(text, "test.yaml", overrides);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

TEST(Blueprint, DefaultParsesToLenet5OnFashionMnist) {
  const Blueprint bp = parse_blueprint(std::string(default_blueprint_text()), "built-in", {});
  EXPECT_EQ(bp.model, "lenet5");
  EXPECT_EQ(bp.data.format, "idx");
  EXPECT_EQ(bp.data.path, "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(bp.epochs, 1);
  EXPECT_EQ(bp.transport, "none");
}

TEST(Blueprint, ReadsEveryKeyAndTypes) {
  const Blueprint bp = parse_blueprint(R"(
name: x
model: resnet18
dataset: {format: cifar10, path: /d, cache: false, augment: true, resize: 64}
epochs: 3
steps: 10
batch: 42
optimizer: {name: adam, lr: 0.001, weight_decay: 0.0005, beta1: 0.8}
seed: 9
threads: 2
transport: ring
output: out
)", "t.yaml", {});
  EXPECT_EQ(bp.model, "resnet18");
  EXPECT_FALSE(bp.data.cache);
  EXPECT_TRUE(bp.data.augment);
  EXPECT_EQ(bp.data.resize, 64);
  EXPECT_EQ(bp.batch, 42);
  EXPECT_EQ(bp.optimizer.name, "adam");
  EXPECT_FLOAT_EQ(bp.optimizer.learning_rate, 0.001f);
  EXPECT_FLOAT_EQ(bp.optimizer.beta1, 0.8f);
  EXPECT_EQ(bp.seed, 9u);
  EXPECT_EQ(bp.transport, "ring");
}

// profile.device_marks: CUDA-event phase marks unless turned off (to measure what they save).
TEST(Blueprint, DeviceMarksAreOnUnlessTurnedOff) {
  EXPECT_TRUE(parse_blueprint("model: mlp\n", "t.yaml", {}).device_marks);
  EXPECT_FALSE(parse_blueprint("model: mlp\n", "t.yaml", {"profile.device_marks=false"}).device_marks);
  EXPECT_FALSE(parse_blueprint("model: mlp\nprofile: {device_marks: false}\n", "t.yaml", {}).device_marks);
}

TEST(Blueprint, OverridesUseDottedKeysAndWin) {
  const Blueprint bp = parse_blueprint("model: mlp\noptimizer: {lr: 0.1}\n", "t.yaml",
                                       {"optimizer.lr=0.5", "dataset.path=/tmp/x", "epochs=4"});
  EXPECT_FLOAT_EQ(bp.optimizer.learning_rate, 0.5f);
  EXPECT_EQ(bp.data.path, "/tmp/x");
  EXPECT_EQ(bp.epochs, 4);
  EXPECT_EQ(bp.resolved["optimizer"]["lr"].as<double>(), 0.5);
}

TEST(Blueprint, TheRunNameFollowsAnOverriddenModel) {
  const std::string text = "name: lenet5-fashion-mnist\nmodel: lenet5\n";
  EXPECT_EQ(parse_blueprint(text, "t.yaml", {"model=mlp"}).name, "mlp-fashion-mnist");
  EXPECT_EQ(parse_blueprint(text, "t.yaml", {}).name, "lenet5-fashion-mnist");
  EXPECT_EQ(parse_blueprint(text, "t.yaml", {"model=mlp", "name=mine"}).name, "mine");
  EXPECT_EQ(parse_blueprint("name: study\nmodel: lenet5\n", "t.yaml", {"model=mlp"}).name, "study-mlp");
  EXPECT_EQ(parse_blueprint("", "t.yaml", {"model=mlp"}).name, "run");  // no name given: the default
  EXPECT_EQ(parse_blueprint("eval: {max_samples: 500}\n", "t.yaml", {}).eval_max_samples, 500);
  EXPECT_NE(error_of("eval: {max_samples: -1}\n").find("eval.max_samples"), std::string::npos);
}

// precision: fp32 by default; tf32 on a GPU; anything else, or tf32 on the cpu, names the key,
// the value and (for the cpu) the device.
TEST(Blueprint, PrecisionIsFp32OrTf32OnAGpu) {
  EXPECT_EQ(parse_blueprint("model: mlp\n", "t.yaml", {}).precision, "fp32");
  EXPECT_EQ(parse_blueprint("model: mlp\nprecision: fp32\n", "t.yaml", {}).precision, "fp32");
  EXPECT_EQ(parse_blueprint("model: mlp\ndevice: cuda\nprecision: tf32\n", "t.yaml", {}).precision, "tf32");
  EXPECT_EQ(parse_blueprint("model: mlp\n", "t.yaml", {"device=cuda", "precision=tf32"}).precision, "tf32");
  const std::string unknown = error_of("device: cuda\nprecision: fp16\n");
  EXPECT_NE(unknown.find("test.yaml: key 'precision': 'fp16' is not one of fp32, tf32"), std::string::npos) << unknown;
  const std::string on_cpu = error_of("precision: tf32\n");
  EXPECT_NE(on_cpu.find("test.yaml: key 'precision': 'tf32' is not available on device 'cpu', which computes in fp32 "
                        "only"),
            std::string::npos)
      << on_cpu;
  EXPECT_NE(error_of("", {"precision=tf32"}).find("key 'precision'"), std::string::npos);
  EXPECT_NE(error_of("precision: 32\n").find("key 'precision'"), std::string::npos);
}

// The PyTorch worker is told the precision in its config.json (pytorch/README.md).
TEST(Blueprint, ThePytorchWorkersConfigNamesThePrecision) {
  const Blueprint bp = parse_blueprint("model: mlp\nengine: pytorch\n", "t.yaml", {});
  const auto model = models::build("mlp", {1, 28, 28}, 10);
  EXPECT_EQ(torch_worker_config(bp, *model, 0, 1, 1, "", "").at("precision"), "fp32");
}

TEST(Blueprint, UnknownKeyNamesTheKeyAndTheChoices) {
  const std::string message = error_of("optimiser: {lr: 1}\n");
  EXPECT_NE(message.find("test.yaml"), std::string::npos) << message;
  EXPECT_NE(message.find("'optimiser'"), std::string::npos) << message;
  EXPECT_NE(message.find("optimizer"), std::string::npos) << message;
  EXPECT_NE(error_of("dataset: {formt: idx}\n").find("dataset.formt"), std::string::npos);
  EXPECT_NE(error_of("", {"optimizer.lrr=1"}).find("optimizer.lrr"), std::string::npos);
}

TEST(Blueprint, WrongTypesAndRangesAreNamed) {
  EXPECT_NE(error_of("epochs: ten\n").find("key 'epochs': expected an integer"), std::string::npos);
  EXPECT_NE(error_of("epochs: 0\n").find("epochs"), std::string::npos);
  EXPECT_NE(error_of("batch: -1\n").find("batch"), std::string::npos);
  EXPECT_NE(error_of("dataset: {cache: maybe}\n").find("true or false"), std::string::npos);
  EXPECT_NE(error_of("dataset: {format: png}\n").find("idx, cifar10, cifar100"), std::string::npos);
  EXPECT_NE(error_of("optimizer: {name: lamb}\n").find("sgd, adam"), std::string::npos);
  EXPECT_NE(error_of("comm: {ring_path: tcp}\n").find("comm.ring_path"), std::string::npos);
  EXPECT_NE(error_of("comm: {ring_path: tcp}\n").find("auto, shm, messages"), std::string::npos);
  EXPECT_EQ(parse_blueprint("comm: {ring_path: messages}\n", "t.yaml", {}).comm.ring_path, "messages");
  EXPECT_NE(error_of("dataset: [1, 2]\n").find("a mapping"), std::string::npos);
  EXPECT_NE(error_of("model: [a]\n").find("key 'model'"), std::string::npos);
  EXPECT_NE(error_of("a: [\n").find("not valid YAML"), std::string::npos);
  EXPECT_NE(error_of("", {"novalue"}).find("key=value"), std::string::npos);
}

TEST(Blueprint, ThePytorchEnginesProfileAndHookAreReadAndChecked) {
  const Blueprint plain = parse_blueprint("", "t.yaml", {});
  EXPECT_EQ(plain.pytorch.profile, "matched");
  EXPECT_EQ(plain.pytorch.ddp_hook, "timed");
  const Blueprint set = parse_blueprint("engine: pytorch\n", "t.yaml", {"pytorch.profile=defaults",
                                                                         "pytorch.ddp_hook=builtin"});
  EXPECT_EQ(set.pytorch.profile, "defaults");
  EXPECT_EQ(set.pytorch.ddp_hook, "builtin");
  const std::string profile = error_of("pytorch: {profile: fast}\n");
  EXPECT_NE(profile.find("key 'pytorch.profile': 'fast' is not one of matched, defaults"), std::string::npos) << profile;
  const std::string hook = error_of("", {"pytorch.ddp_hook=none"});
  EXPECT_NE(hook.find("key 'pytorch.ddp_hook': 'none' is not one of timed, builtin"), std::string::npos) << hook;
  EXPECT_NE(error_of("pytorch: {threads: 2}\n").find("threads"), std::string::npos);
}

// yaml-cpp keeps both entries of a repeated key; the blueprint names the key and both lines.
TEST(Blueprint, AKeySetTwiceIsAnErrorNamingBothLines) {
  const std::string top = error_of("model: mlp\nepochs: 2\nmodel: lenet5\n");
  EXPECT_NE(top.find("test.yaml: key 'model' is set twice, on lines 1 and 3"), std::string::npos) << top;
  const std::string nested = error_of("name: x\noptimizer:\n  lr: 0.1\n  momentum: 0.9\n  lr: 0.2\n");
  EXPECT_NE(nested.find("key 'optimizer.lr' is set twice, on lines 3 and 5"), std::string::npos) << nested;
  EXPECT_EQ(error_of("optimizer: {lr: 0.1}\ncomm: {timeout_s: 5}\n"), "");  // the same key in two sections
}

TEST(Blueprint, ANegativeSeedAsksForANonNegativeInteger) {
  const std::string message = error_of("", {"seed=-1"});
  EXPECT_NE(message.find("key 'seed': expected a non-negative integer, got '-1'"), std::string::npos) << message;
}

TEST(Blueprint, AnEmptyFileIsAnErrorNamingIt) {
  const auto file = std::filesystem::temp_directory_path() / ("dtbench-empty-" + std::to_string(getpid()) + ".yaml");
  for (const char* text : {"", "\n  \n", "# only a comment\n"}) {
    std::ofstream(file) << text;
    try {
      load_blueprint(file.string(), {});
      ADD_FAILURE() << "accepted a blueprint holding '" << text << "'";
    } catch (const InputError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(file.string() + ": the file holds no keys"), std::string::npos) << message;
    }
  }
  std::filesystem::remove(file);
}

TEST(Blueprint, MissingFileIsNamed) {
  try {
    load_blueprint("/nonexistent/blue.yaml", {});
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/blue.yaml"), std::string::npos);
  }
}

// Every blueprint shipped in configs/ parses, and its model takes its data set's samples.
TEST(Blueprint, EveryShippedBlueprintLoadsAndItsModelBuilds) {
  int checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(DTBENCH_CONFIGS_DIR)) {
    if (entry.path().extension() != ".yaml" || entry.path().parent_path().filename() == "sweeps") continue;
    SCOPED_TRACE(entry.path().string());
    const Blueprint bp = load_blueprint(entry.path().string(), {});
    const bool idx = bp.data.format == "idx";
    Shape sample = idx ? Shape{1, 28, 28} : Shape{3, 32, 32};
    if (bp.data.resize > 0) sample = {sample[0], bp.data.resize, bp.data.resize};
    EXPECT_NO_THROW(models::build(bp.model, sample, bp.data.format == "cifar100" ? 100 : 10));
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

// Every sweep shipped in configs/sweeps reads, and every configuration's blueprint resolves.
TEST(Blueprint, EveryShippedSweepExpands) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(DTBENCH_CONFIGS_DIR) + "/sweeps")) {
    SCOPED_TRACE(entry.path().string());
    const SweepBlueprint sweep = load_sweep(entry.path(), {});
    EXPECT_GE(expand_sweep(sweep).size(), 2u);
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

}  // namespace
}  // namespace dtbench
