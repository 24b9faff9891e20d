// The catalogue of bench ops: each family's shapes and how to print them. Convolution shapes are
// the CIFAR ResNet-18 layers of this project's models at batch 64. The memory-bound families start
// at 32 MiB per tensor, about a last-level cache, and go on to four times that, beyond it: the
// bandwidth ceiling is memory's, and a tensor the cache held would be timed well above it (on the
// development VM, ReLU's forward counted about 50 GB/s at 32 MiB and 27 at 128 MiB).
#include "launch/bench/op_cases.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/util/error.h"
#include "core/util/rng.h"

namespace dtbench {

namespace {

std::string gemm_text(const Shape& s) { return fmt::format("m={} n={} k={}", s[0], s[1], s[2]); }
std::string conv_text(const Shape& s) {
  return fmt::format("{}x{}x{}x{} -> {}, {}x{} s{} p{}", s[0], s[1], s[2], s[3], s[4], s[5], s[5], s[6], s[7]);
}
std::string pool_text(const Shape& s) {
  return fmt::format("{}x{}x{}x{}, {}x{} s{}", s[0], s[1], s[2], s[3], s[4], s[4], s[5]);
}
std::string nchw_text(const Shape& s) { return fmt::format("{}x{}x{}x{}", s[0], s[1], s[2], s[3]); }
std::string logits_text(const Shape& s) { return fmt::format("B={} K={}", s[0], s[1]); }
std::string params_text(const Shape& s) { return fmt::format("{} params", s[0]); }

// B C H W: activations of the first stage of CIFAR ResNet-18 at batch 128 (32 MiB) and 512.
const std::vector<Shape> kActivationShapes = {{128, 64, 32, 32}, {512, 64, 32, 32}};
// B C H W k stride: VGG's 2x2 pooling on those, and ImageNet ResNet's 3x3 stem pooling.
const std::vector<Shape> kPoolShapes = {{128, 64, 32, 32, 2, 2}, {512, 64, 32, 32, 2, 2}, {32, 64, 112, 112, 3, 2}};
// Parameter counts of this project's CIFAR ResNet-18 and ResNet-50.
const std::vector<Shape> kParamCounts = {{11173962}, {23520842}};

// B C H W Cout k stride pad: ResNet-18's 3x3 stride-1 convolutions at batch 64 — the stem (3 input
// channels: a thin product) and the layer of each stage — and a small one for --sizes small.
const std::vector<Shape> kResNetThreeByThree = {{64, 3, 32, 32, 64, 3, 1, 1},
                                                {64, 64, 32, 32, 64, 3, 1, 1},
                                                {64, 128, 16, 16, 128, 3, 1, 1},
                                                {64, 256, 8, 8, 256, 3, 1, 1},
                                                {64, 512, 4, 4, 512, 3, 1, 1}};
const Shape kConvSmallShape = {16, 64, 16, 16, 64, 3, 1, 1};

std::vector<Shape> with(std::vector<Shape> shapes, const Shape& more) {
  shapes.push_back(more);
  return shapes;
}

std::vector<OpFamily> make_families() {
  return {
      // m n k: squares up to where sgemm runs near its peak, and a batch of 128 through a
      // 4096-wide linear layer.
      {"gemm",
       {{512, 512, 512}},
       {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}, {128, 4096, 4096}},
       gemm_text, gemm_passes},
      // im2col + sgemm over the 3x3 stride-1 shapes and a 1x1 shortcut.
      {"conv", {kConvSmallShape}, with(kResNetThreeByThree, {64, 128, 16, 16, 256, 1, 2, 0}), conv_text, conv_passes},
      // The same 3x3 stride-1 shapes by Winograd F(2x2, 3x3), the path Conv2d takes for them.
      {"conv_winograd", {kConvSmallShape}, kResNetThreeByThree, conv_text, conv_winograd_passes},
      // And by F(4x4, 3x3), which the measured choice may take instead.
      {"conv_winograd4", {kConvSmallShape}, kResNetThreeByThree, conv_text, conv_winograd4_passes},
      {"maxpool", {kPoolShapes.front()}, kPoolShapes, pool_text, maxpool_passes},
      {"avgpool", {kPoolShapes.front()}, kPoolShapes, pool_text, avgpool_passes},
      {"batchnorm", {kActivationShapes.front()}, kActivationShapes, nchw_text, batchnorm_passes},
      {"relu", {kActivationShapes.front()}, kActivationShapes, nchw_text, relu_passes},
      {"tanh", {kActivationShapes.front()}, kActivationShapes, nchw_text, tanh_passes},
      {"sigmoid", {kActivationShapes.front()}, kActivationShapes, nchw_text, sigmoid_passes},
      // B K: a CIFAR batch's logits (128 x 10) fit in L1 and would time the call, not the
      // arithmetic; these are ImageNet's 1000 classes and a 32k vocabulary.
      {"softmax_xent", {{8192, 1000}}, {{8192, 1000}, {1024, 32000}}, logits_text, softmax_xent_passes},
      {"sgd", {kParamCounts.front()}, kParamCounts, params_text, sgd_passes},
      {"adam", {kParamCounts.front()}, kParamCounts, params_text, adam_passes},
  };
}

}  // namespace

const std::vector<OpFamily>& op_families() {
  static const std::vector<OpFamily> families = make_families();
  return families;
}

std::vector<const OpFamily*> select_op_families(const std::vector<std::string>& names) {
  std::vector<std::string> known;
  for (const OpFamily& family : op_families()) known.push_back(family.name);
  for (const std::string& name : names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      fail_input("--ops: unknown operator '{}'; choose from {}", name, fmt::join(known, ", "));
    }
  }
  std::vector<const OpFamily*> selected;
  for (const OpFamily& family : op_families()) {
    if (names.empty() || std::find(names.begin(), names.end(), family.name) != names.end()) selected.push_back(&family);
  }
  return selected;
}

void fill_uniform(Tensor& tensor, uint64_t seed, float low, float high) {
  Rng rng(seed);
  for (float& value : tensor.span()) value = rng.uniform(low, high);
}

}  // namespace dtbench
