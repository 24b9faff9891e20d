// vgg16 with batch norm, the CIFAR variant of kuangliu/pytorch-cifar (Simonyan & Zisserman 2015,
// Ioffe & Szegedy 2015):
//   13 x [conv3x3 pad 1 (with bias), batch norm, ReLU] over the configuration
//   64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M   (M: maxpool 2)
//   then flatten and one Linear 512→classes.
// The single-linear classifier is the common CIFAR choice: after five pools a 32x32 image is one
// 512-vector, and the original three 4096-wide layers (sized for 7x7x512 ImageNet features) add
// ~120 M parameters that a 10-class 32x32 task does not need. The convolutions keep their bias,
// as the reference does (a bias before batch norm is redundant, but it is part of the reference
// parameter count). Parameters for (3, 32, 32) and 10 classes:
//   conv 14,714,688 + batch norm 8,448 + linear 5,130 = 14,728,266.
// MACs/sample for (3, 32, 32): conv 313,196,544 + batch norm 276,480 (one per value) + linear
// 5,120 = 313,478,144.
// H and W may be any multiples of 32; the linear layer then takes 512·(H/32)·(W/32) inputs.
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

struct VggStage {
  int64_t channels;
  int convolutions;
};

constexpr std::array<VggStage, 5> kVgg16Stages{{{64, 2}, {128, 2}, {256, 3}, {512, 3}, {512, 3}}};

}  // namespace

std::unique_ptr<Sequential> build_vgg16(const Shape& sample_input, int64_t classes) {
  const char* accepts = "(C, H, W) with H and W multiples of 32, e.g. (3, 32, 32)";
  require_image("vgg16", sample_input, accepts);
  const int64_t height = sample_input[1];
  const int64_t width = sample_input[2];
  if (height % 32 != 0 || width % 32 != 0) reject_input("vgg16", sample_input, accepts);

  auto net = std::make_unique<Sequential>();
  int64_t channels = sample_input[0];
  for (size_t stage = 0; stage < kVgg16Stages.size(); ++stage) {
    for (int i = 0; i < kVgg16Stages[stage].convolutions; ++i) {
      const std::string suffix = std::to_string(stage + 1) + "_" + std::to_string(i + 1);
      const int64_t out = kVgg16Stages[stage].channels;
      net->emplace<Conv2d>("conv" + suffix, channels, out, 3, 1, 1, true, Init::KaimingNormal);
      net->emplace<BatchNorm2d>("bn" + suffix, out);
      net->emplace<ReLU>("relu" + suffix, true);
      channels = out;
    }
    net->emplace<MaxPool2d>("pool" + std::to_string(stage + 1), 2, 2);
  }
  net->emplace<Flatten>("flatten");
  net->emplace<Linear>("fc", channels * (height / 32) * (width / 32), classes,
                       Init::XavierUniform);
  return net;
}

}  // namespace dtbench::models::detail
