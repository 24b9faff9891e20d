// resnet18 and resnet50, the CIFAR variants of kuangliu/pytorch-cifar (He et al. 2016):
//   stem   conv3x3 C→64 stride 1 pad 1 (no bias), batch norm, ReLU; no max-pool
//   layer1..layer4  blocks at 64, 128, 256, 512 planes; the first block of layers 2–4 has
//          stride 2; resnet18: [2, 2, 2, 2] basic blocks, resnet50: [3, 4, 6, 3] bottlenecks
//   head   global average pool, Linear → classes
// Basic block:  main = conv3x3/s, BN, ReLU, conv3x3, BN                      (expansion 1)
// Bottleneck:   main = conv1x1, BN, ReLU, conv3x3/s, BN, ReLU, conv1x1 ×4, BN  (expansion 4;
//               the stride sits on the 3x3 convolution, "ResNet v1.5")
// Both: out = relu(main(x) + shortcut(x)); the shortcut is the identity, or conv1x1/s (no bias)
// + BN where the stride or the channel count changes. Convolutions feeding batch norm have no
// bias. ReLUs inside blocks run in place (batch norm's backward does not read its output).
// Parameters for (3, 32, 32) and 10 classes: resnet18 11,173,962; resnet50 23,520,842.
// MACs/sample (convolutions, linear and one per batch-norm value): 556,037,120 and 1,301,262,336.
// Any (C, H, W) fits: the stride-2 layers round odd sizes up and the pool is global.
#include <array>
#include <string>

#include "core/layers/activation.h"
#include "core/layers/batchnorm.h"
#include "core/layers/conv2d.h"
#include "core/layers/linear.h"
#include "core/layers/pooling.h"
#include "core/models/architectures.h"

namespace dtbench::models::detail {

namespace {

constexpr std::array<int64_t, 4> kStagePlanes{64, 128, 256, 512};

// Appends conv (no bias) + batch norm, named conv<index> / bn<index>.
void conv_bn(Sequential& seq, int index, int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  const std::string suffix = std::to_string(index);
  seq.emplace<Conv2d>("conv" + suffix, in, out, kernel, stride, kernel / 2, false,
                      Init::KaimingNormal);
  seq.emplace<BatchNorm2d>("bn" + suffix, out);
}

std::unique_ptr<Sequential> shortcut(int64_t in, int64_t out, int64_t stride) {
  auto seq = std::make_unique<Sequential>();  // empty: identity
  if (stride != 1 || in != out) {
    seq->emplace<Conv2d>("0", in, out, 1, stride, 0, false, Init::KaimingNormal);
    seq->emplace<BatchNorm2d>("1", out);
  }
  return seq;
}

std::unique_ptr<Layer> basic_block(int64_t in, int64_t planes, int64_t stride) {
  auto main = std::make_unique<Sequential>();
  conv_bn(*main, 1, in, planes, 3, stride);
  main->emplace<ReLU>("relu1", true);
  conv_bn(*main, 2, planes, planes, 3, 1);
  return std::make_unique<Residual>(std::move(main), shortcut(in, planes, stride));
}

std::unique_ptr<Layer> bottleneck_block(int64_t in, int64_t planes, int64_t stride) {
  constexpr int64_t kExpansion = 4;
  auto main = std::make_unique<Sequential>();
  conv_bn(*main, 1, in, planes, 1, 1);
  main->emplace<ReLU>("relu1", true);
  conv_bn(*main, 2, planes, planes, 3, stride);
  main->emplace<ReLU>("relu2", true);
  conv_bn(*main, 3, planes, kExpansion * planes, 1, 1);
  return std::make_unique<Residual>(std::move(main), shortcut(in, kExpansion * planes, stride));
}

std::unique_ptr<Sequential> build_resnet(std::string_view model, const Shape& sample_input,
                                         int64_t classes, const std::array<int, 4>& blocks,
                                         bool bottleneck) {
  require_image(model, sample_input, "any (C, H, W), e.g. (3, 32, 32)");
  const int64_t expansion = bottleneck ? 4 : 1;

  auto net = std::make_unique<Sequential>();
  conv_bn(*net, 1, sample_input[0], kStagePlanes[0], 3, 1);
  net->emplace<ReLU>("relu", true);
  int64_t channels = kStagePlanes[0];
  for (size_t stage = 0; stage < blocks.size(); ++stage) {
    auto layer = std::make_unique<Sequential>();
    for (int block = 0; block < blocks[stage]; ++block) {
      const int64_t stride = (stage > 0 && block == 0) ? 2 : 1;
      const int64_t planes = kStagePlanes[stage];
      layer->add(std::to_string(block), bottleneck ? bottleneck_block(channels, planes, stride)
                                                   : basic_block(channels, planes, stride));
      channels = planes * expansion;
    }
    net->add("layer" + std::to_string(stage + 1), std::move(layer));
  }
  net->emplace<GlobalAvgPool>("avgpool");
  net->emplace<Linear>("fc", channels, classes, Init::XavierUniform);
  return net;
}

}  // namespace

std::unique_ptr<Sequential> build_resnet18(const Shape& sample_input, int64_t classes) {
  return build_resnet("resnet18", sample_input, classes, {2, 2, 2, 2}, false);
}

std::unique_ptr<Sequential> build_resnet50(const Shape& sample_input, int64_t classes) {
  return build_resnet("resnet50", sample_input, classes, {3, 4, 6, 3}, true);
}

}  // namespace dtbench::models::detail
