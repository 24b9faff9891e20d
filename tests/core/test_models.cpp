// The model catalogue: parameter counts against the reference architectures (counted here from
// the layer sizes, not from our layers), forward shapes, MACs, seeding, input errors, the classic
// overfit check and finite differences through a residual block.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/layers/activation.h"
#include "core/layers/batchnorm.h"
#include "core/layers/conv2d.h"
#include "core/layers/loss.h"
#include "core/models/models.h"
#include "core/optim/optimizer.h"
#include "core/util/error.h"
#include "support/gradcheck.h"

namespace dtbench {
namespace {

using testing::random_tensor;

// Reference counts, from the layer sizes alone.
int64_t conv_params(int64_t in, int64_t out, int64_t kernel, bool bias) {
  return out * in * kernel * kernel + (bias ? out : 0);
}
int64_t linear_params(int64_t in, int64_t out) { return out * in + out; }
int64_t bn_params(int64_t channels) { return 2 * channels; }
int64_t conv_macs(int64_t in, int64_t out, int64_t kernel, int64_t out_size) {
  return out_size * out_size * out * in * kernel * kernel;
}

int64_t count_of(std::string_view name, const Shape& input, int64_t classes = 10) {
  return models::build(name, input, classes)->parameter_count();
}

TEST(Models, CatalogueListsEveryModelWithABuildableDefaultInput) {
  std::vector<std::string> names;
  for (const auto& entry : models::catalogue()) {
    names.push_back(entry.name);
    EXPECT_FALSE(entry.description.empty()) << entry.name;
    auto model = models::build(entry.name, entry.default_input, 10);
    EXPECT_EQ(model->name(), entry.name);
    EXPECT_EQ(model->sample_input_shape(), entry.default_input);
    EXPECT_EQ(model->classes(), 10);
    EXPECT_GT(model->parameter_count(), 0);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"mlp", "lenet5", "alexnet", "vgg16", "resnet18",
                                             "resnet50"}));
}

TEST(Models, MlpAndLenetParameterCounts) {
  EXPECT_EQ(count_of("mlp", {1, 28, 28}),
            linear_params(784, 128) + linear_params(128, 64) + linear_params(64, 10));
  EXPECT_EQ(count_of("mlp", {1, 28, 28}), 109'386);

  auto lenet = [](int64_t channels) {
    return conv_params(channels, 6, 5, true) + conv_params(6, 16, 5, true) +
           linear_params(400, 120) + linear_params(120, 84) + linear_params(84, 10);
  };
  EXPECT_EQ(lenet(3), 62'006);
  EXPECT_EQ(count_of("lenet5", {3, 32, 32}), 62'006);
  EXPECT_EQ(count_of("lenet5", {1, 28, 28}), lenet(1));
  EXPECT_EQ(count_of("lenet5", {1, 32, 32}), lenet(1));
}

TEST(Models, AlexnetParameterCount) {
  // 5 conv (3→64/2, 64→192, 192→384, 384→256, 256→256, all 3x3 with bias), 3 pools of 2:
  // 64x64 → 32 → 16 → 8 → 4, so the classifier sees 256·4·4; then 4096, 4096, classes.
  auto alexnet = [](int64_t side, int64_t classes) {
    const int64_t spatial = side / 16;
    return conv_params(3, 64, 3, true) + conv_params(64, 192, 3, true) +
           conv_params(192, 384, 3, true) + conv_params(384, 256, 3, true) +
           conv_params(256, 256, 3, true) + linear_params(256 * spatial * spatial, 4096) +
           linear_params(4096, 4096) + linear_params(4096, classes);
  };
  EXPECT_EQ(count_of("alexnet", {3, 64, 64}), alexnet(64, 10));
  EXPECT_EQ(alexnet(64, 10), 35'855'178);
  EXPECT_EQ(count_of("alexnet", {3, 32, 32}, 100), alexnet(32, 100));
}

TEST(Models, Vgg16ParameterCount) {
  const std::array<int64_t, 13> widths{64, 64, 128, 128, 256, 256, 256, 512, 512, 512, 512, 512, 512};
  int64_t reference = 0;
  int64_t in = 3;
  for (int64_t out : widths) {
    reference += conv_params(in, out, 3, true) + bn_params(out);
    in = out;
  }
  reference += linear_params(512, 10);
  EXPECT_EQ(reference, 14'728'266);
  EXPECT_EQ(count_of("vgg16", {3, 32, 32}), reference);
}

TEST(Models, ResnetParameterCounts) {
  // Stem and head, then per block: main branch + projection shortcut where the shape changes.
  auto resnet = [](const std::array<int, 4>& blocks, bool bottleneck) {
    const int64_t expansion = bottleneck ? 4 : 1;
    int64_t total = conv_params(3, 64, 3, false) + bn_params(64);
    int64_t in = 64;
    const std::array<int64_t, 4> planes{64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage) {
      for (int block = 0; block < blocks[stage]; ++block) {
        const int64_t p = planes[stage];
        const int64_t out = p * expansion;
        if (bottleneck) {
          total += conv_params(in, p, 1, false) + bn_params(p) + conv_params(p, p, 3, false) +
                   bn_params(p) + conv_params(p, out, 1, false) + bn_params(out);
        } else {
          total += conv_params(in, p, 3, false) + bn_params(p) + conv_params(p, p, 3, false) +
                   bn_params(p);
        }
        const bool strided = stage > 0 && block == 0;
        if (strided || in != out) total += conv_params(in, out, 1, false) + bn_params(out);
        in = out;
      }
    }
    return total + linear_params(in, 10);
  };
  EXPECT_EQ(resnet({2, 2, 2, 2}, false), 11'173'962);
  EXPECT_EQ(resnet({3, 4, 6, 3}, true), 23'520'842);
  EXPECT_EQ(count_of("resnet18", {3, 32, 32}), 11'173'962);
  EXPECT_EQ(count_of("resnet50", {3, 32, 32}), 23'520'842);
}

TEST(Models, ParametersAreNamedByPath) {
  auto model = models::build("resnet18", {3, 32, 32}, 10);
  std::vector<std::string> names;
  for (const Param* param : model->arena().params()) names.push_back(param->name);
  for (const char* expected : {"conv1.weight", "bn1.weight", "layer1.0.main.conv1.weight",
                               "layer2.0.shortcut.0.weight", "layer4.1.main.bn2.bias",
                               "fc.weight", "fc.bias"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  EXPECT_EQ(std::find(names.begin(), names.end(), "layer1.0.shortcut.0.weight"), names.end())
      << "layer1 keeps 64 channels and stride 1: identity shortcut";
}

TEST(Models, LenetAndAlexnetMacsPerSample) {
  // Convolutions: Ho·Wo·Cout·Cin·k²; linear: in·out. ReLU and pooling count none.
  const int64_t fc = 400 * 120 + 120 * 84 + 84 * 10;
  const int64_t lenet_rgb = conv_macs(3, 6, 5, 28) + conv_macs(6, 16, 5, 10) + fc;
  EXPECT_EQ(lenet_rgb, 651'720);
  EXPECT_EQ(models::build("lenet5", {3, 32, 32}, 10)->macs_per_sample(), lenet_rgb);
  EXPECT_EQ(models::build("lenet5", {1, 28, 28}, 10)->macs_per_sample(),
            conv_macs(1, 6, 5, 28) + conv_macs(6, 16, 5, 10) + fc);

  const int64_t alexnet = conv_macs(3, 64, 3, 32) + conv_macs(64, 192, 3, 16) +
                          conv_macs(192, 384, 3, 8) + conv_macs(384, 256, 3, 8) +
                          conv_macs(256, 256, 3, 8) + 4096 * 4096 * 2 + 4096 * 10;
  EXPECT_EQ(models::build("alexnet", {3, 64, 64}, 10)->macs_per_sample(), alexnet);
}

// Forward on a batch of two gives finite (2, classes) logits; backward gives finite gradients.
void expect_finite_step(std::string_view name, const Shape& input, int64_t classes,
                        bool run_backward) {
  SCOPED_TRACE(std::string(name));
  auto model = models::build(name, input, classes);
  model->initialize(1);
  Shape batch_shape = input;
  batch_shape.insert(batch_shape.begin(), 2);
  const Tensor batch = random_tensor(batch_shape, 5);
  for (Mode mode : {Mode::Eval, Mode::Train}) {
    const Tensor& logits = model->forward(batch, mode);
    ASSERT_EQ(logits.shape(), (Shape{2, classes}));
    EXPECT_TRUE(std::all_of(logits.span().begin(), logits.span().end(),
                            [](float v) { return std::isfinite(v); }));
  }
  if (!run_backward) return;
  const std::vector<int32_t> labels{0, static_cast<int32_t>(classes - 1)};
  Tensor grad(Shape{2, classes});
  const LossResult loss = softmax_cross_entropy(model->forward(batch, Mode::Train), labels, &grad);
  EXPECT_TRUE(std::isfinite(loss.loss));
  model->backward(grad);
  const auto grads = model->arena().grads();
  EXPECT_TRUE(std::all_of(grads.begin(), grads.end(), [](float v) { return std::isfinite(v); }));
  EXPECT_TRUE(std::any_of(grads.begin(), grads.end(), [](float v) { return v != 0.0f; }));
}

TEST(Models, SmallModelsGiveFiniteLogitsAndGradients) {
  expect_finite_step("mlp", {1, 28, 28}, 10, true);
  expect_finite_step("lenet5", {1, 28, 28}, 10, true);
  expect_finite_step("lenet5", {3, 32, 32}, 7, true);
  expect_finite_step("alexnet", {3, 64, 64}, 10, true);
}

TEST(Models, LargeModelsGiveFiniteLogits) {
  expect_finite_step("vgg16", {3, 32, 32}, 10, true);
  expect_finite_step("resnet18", {3, 32, 32}, 10, true);
  expect_finite_step("resnet50", {3, 32, 32}, 10, false);
}

std::vector<float> initial_values(std::string_view name, const Shape& input, uint64_t seed) {
  auto model = models::build(name, input, 10);
  model->initialize(seed);
  const auto values = model->arena().values();
  return {values.begin(), values.end()};
}

TEST(Models, SameSeedGivesBitIdenticalWeights) {
  for (const auto& [name, input] : std::vector<std::pair<std::string, Shape>>{
           {"lenet5", {1, 28, 28}}, {"resnet18", {3, 32, 32}}}) {
    const auto first = initial_values(name, input, 42);
    const auto again = initial_values(name, input, 42);
    const auto other = initial_values(name, input, 43);
    ASSERT_EQ(first.size(), again.size());
    EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)), 0) << name;
    EXPECT_NE(first, other) << name;
  }
}

void expect_input_error(std::string_view name, const Shape& input, int64_t classes,
                        const std::vector<std::string>& mentions) {
  try {
    models::build(name, input, classes);
    ADD_FAILURE() << name << " accepted " << shape_string(input);
  } catch (const InputError& error) {
    const std::string message = error.what();
    for (const std::string& mention : mentions) {
      EXPECT_NE(message.find(mention), std::string::npos) << "'" << message << "' lacks " << mention;
    }
  }
}

TEST(Models, UnknownNameListsTheValidOnes) {
  expect_input_error("resnet", {3, 32, 32}, 10,
                     {"resnet", "mlp", "lenet5", "alexnet", "vgg16", "resnet18", "resnet50"});
  expect_input_error("", {3, 32, 32}, 10, {"mlp"});
}

TEST(Models, MisfitInputsNameTheModelAndTheShape) {
  expect_input_error("lenet5", {3, 64, 64}, 10, {"lenet5", "(3, 64, 64)", "32"});
  expect_input_error("lenet5", {3, 32, 28}, 10, {"lenet5", "(3, 32, 28)"});
  expect_input_error("mlp", {3, 32, 32}, 10, {"mlp", "(3, 32, 32)", "784"});
  expect_input_error("alexnet", {1, 28, 28}, 10, {"alexnet", "(1, 28, 28)", "16"});
  expect_input_error("vgg16", {3, 28, 28}, 10, {"vgg16", "(3, 28, 28)", "32"});
  expect_input_error("resnet18", {3, 32}, 10, {"resnet18", "(3, 32)"});
  expect_input_error("resnet50", {0, 32, 32}, 10, {"resnet50", "(0, 32, 32)"});
  expect_input_error("mlp", {1, 28, 28}, 0, {"mlp", "classes"});
}

// The classic sanity check: a small network memorises one fixed random batch.
TEST(Models, LenetOverfitsOneBatch) {
  constexpr int64_t kBatch = 16;
  auto model = models::build("lenet5", {1, 28, 28}, 10);
  model->initialize(3);
  const Tensor batch = random_tensor({kBatch, 1, 28, 28}, 11);
  std::vector<int32_t> labels(kBatch);
  Rng rng(12);
  for (int32_t& label : labels) label = static_cast<int32_t>(rng.below(10));

  OptimizerConfig config;
  config.name = "sgd";
  config.learning_rate = 0.05f;
  auto optimizer = make_optimizer(config, model->arena().count());
  Tensor grad(Shape{kBatch, 10});
  double first_loss = 0.0, loss = 0.0;
  for (int step = 0; step < 200; ++step) {
    loss = softmax_cross_entropy(model->forward(batch, Mode::Train), labels, &grad).loss;
    if (step == 0) first_loss = loss;
    model->backward(grad);
    optimizer->step(model->arena().values(), model->arena().grads());
  }
  const LossResult final = softmax_cross_entropy(model->forward(batch, Mode::Eval), labels, nullptr);
  EXPECT_GT(first_loss, 1.0);
  EXPECT_LT(loss, 0.05) << "started at " << first_loss;
  EXPECT_EQ(final.correct, kBatch);
}

// Exposes every parameter below a composite layer as its own, so that gradcheck (which checks a
// layer's own parameters) covers a whole residual block.
class WholeTree : public Layer {
 public:
  explicit WholeTree(Layer& inner) : inner_(inner) {}
  std::string kind() const override { return "tree"; }
  Shape configure(const Shape& sample_input) override {
    const Shape output = inner_.configure(sample_input);
    name(inner_, "block");
    return output;
  }
  const Tensor& forward(const Tensor& input, Mode mode) override {
    return inner_.forward(input, mode);
  }
  Tensor& backward(Tensor& grad_output) override { return inner_.backward(grad_output); }
  void collect_params(std::vector<Param*>& out) override { collect(inner_, out); }

 private:
  static void name(Layer& layer, const std::string& path) {
    std::vector<Param*> own;
    layer.collect_params(own);
    for (Param* param : own) param->name = path + "." + param->name;
    for (auto& [child_name, child] : layer.children()) name(*child, path + "." + child_name);
  }
  static void collect(Layer& layer, std::vector<Param*>& out) {
    layer.collect_params(out);
    for (auto& [child_name, child] : layer.children()) collect(*child, out);
  }
  Layer& inner_;
};

// A basic block in miniature: relu(BN(conv(relu(BN(conv(x))))) + shortcut(x)).
std::unique_ptr<Residual> tiny_block(int64_t in, int64_t out, int64_t stride) {
  auto main = std::make_unique<Sequential>();
  main->emplace<Conv2d>("conv1", in, out, 3, stride, 1, false);
  main->emplace<BatchNorm2d>("bn1", out);
  main->emplace<ReLU>("relu1", true);
  main->emplace<Conv2d>("conv2", out, out, 3, 1, 1, false);
  main->emplace<BatchNorm2d>("bn2", out);
  auto shortcut = std::make_unique<Sequential>();
  if (stride != 1 || in != out) {
    shortcut->emplace<Conv2d>("0", in, out, 1, stride, 0, false);
    shortcut->emplace<BatchNorm2d>("1", out);
  }
  return std::make_unique<Residual>(std::move(main), std::move(shortcut));
}

TEST(Models, ResidualBlockGradientsMatchFiniteDifferences) {
  for (const auto& [in, out, stride] : std::vector<std::array<int64_t, 3>>{{3, 3, 1}, {2, 4, 2}}) {
    SCOPED_TRACE(fmt::format("block {}→{} stride {}", in, out, stride));
    auto block = tiny_block(in, out, stride);
    WholeTree tree(*block);
    tree.configure({in, 6, 6});
    ParamArena arena = testing::bind_params(tree, 21);
    // A small step: the ReLUs' kinks make larger ones cross zero for some outputs.
    testing::GradcheckOptions options;
    options.step = 1e-3f;
    testing::expect_gradients_match(tree, random_tensor({4, in, 6, 6}, 22), options);
  }
}

}  // namespace
}  // namespace dtbench
