// The small classic networks: the MNIST perceptron, LeNet-5 and AlexNet for small images.
// Layers followed by ReLU start from Kaiming-normal weights; each final classifier from
// Xavier-uniform (no ReLU follows it). Biases start at zero.
#include "core/layers/activation.h"
#include "core/layers/conv2d.h"
#include "core/layers/linear.h"
#include "core/layers/pooling.h"
#include "core/models/architectures.h"

namespace dtbench::models::detail {

// mlp (Rysia's MNIST network): flatten, 784→128, ReLU, 128→64, ReLU, 64→classes.
// Parameters with 10 classes: 100,480 + 8,256 + 650 = 109,386; MACs/sample the same less biases,
// 109,184.
std::unique_ptr<Sequential> build_mlp(const Shape& sample_input, int64_t classes) {
  constexpr int64_t kInputs = 784;
  const char* accepts = "a (C, H, W) sample of C·H·W = 784 values, e.g. (1, 28, 28)";
  require_image("mlp", sample_input, accepts);
  if (element_count(sample_input) != kInputs) reject_input("mlp", sample_input, accepts);

  auto net = std::make_unique<Sequential>();
  net->emplace<Flatten>("flatten");
  net->emplace<Linear>("fc1", kInputs, 128, Init::KaimingNormal);
  net->emplace<ReLU>("relu1", true);
  net->emplace<Linear>("fc2", 128, 64, Init::KaimingNormal);
  net->emplace<ReLU>("relu2", true);
  net->emplace<Linear>("fc3", 64, classes, Init::XavierUniform);
  return net;
}

// lenet5, with ReLU and max-pooling in place of the original's scaled tanh and subsampling:
//   (C, 32, 32) conv5x5 C→6 → (6, 28, 28), ReLU, maxpool 2 → (6, 14, 14)
//               conv5x5 6→16 → (16, 10, 10), ReLU, maxpool 2 → (16, 5, 5), flatten → 400
//               fc 400→120, ReLU, fc 120→84, ReLU, fc 84→classes
// A (C, 28, 28) input (MNIST) is padded by 2 in the first convolution, which restores the
// classic 32x32 geometry. Parameters for (3, 32, 32) and 10 classes:
//   456 + 2,416 + 48,120 + 10,164 + 850 = 62,006.
// MACs/sample for (3, 32, 32): 352,800 + 240,000 + 48,000 + 10,080 + 840 = 651,720.
std::unique_ptr<Sequential> build_lenet5(const Shape& sample_input, int64_t classes) {
  const char* accepts = "(C, 32, 32), or (C, 28, 28) padded to 32x32";
  require_image("lenet5", sample_input, accepts);
  const int64_t channels = sample_input[0];
  const int64_t height = sample_input[1];
  const int64_t width = sample_input[2];
  if (height != width || (height != 32 && height != 28)) {
    reject_input("lenet5", sample_input, accepts);
  }
  const int64_t padding = (32 - height) / 2;

  auto net = std::make_unique<Sequential>();
  net->emplace<Conv2d>("conv1", channels, 6, 5, 1, padding, true, Init::KaimingNormal);
  net->emplace<ReLU>("relu1", true);
  net->emplace<MaxPool2d>("pool1", 2, 2);
  net->emplace<Conv2d>("conv2", 6, 16, 5, 1, 0, true, Init::KaimingNormal);
  net->emplace<ReLU>("relu2", true);
  net->emplace<MaxPool2d>("pool2", 2, 2);
  net->emplace<Flatten>("flatten");
  net->emplace<Linear>("fc1", 16 * 5 * 5, 120, Init::KaimingNormal);
  net->emplace<ReLU>("relu3", true);
  net->emplace<Linear>("fc2", 120, 84, Init::KaimingNormal);
  net->emplace<ReLU>("relu4", true);
  net->emplace<Linear>("fc3", 84, classes, Init::XavierUniform);
  return net;
}

// alexnet for small images (CIFAR upscaled to 64x64, as in the CPU-cluster study of Krisilias et
// al.). The usual CIFAR adaptation of torchvision's AlexNet: a 3x3 stride-2 first convolution
// in place of the 11x11 stride-4 one, 2x2 pools, and the original 4096-wide classifier, so that
// most parameters sit in the fully connected layers, as in the original network.
//   (3, 64, 64) conv3x3/2 pad 1, 3→64     → (64, 32, 32),  ReLU, maxpool 2 → (64, 16, 16)
//               conv3x3 pad 1, 64→192     → (192, 16, 16), ReLU, maxpool 2 → (192, 8, 8)
//               conv3x3 pad 1, 192→384    → (384, 8, 8),   ReLU
//               conv3x3 pad 1, 384→256    → (256, 8, 8),   ReLU
//               conv3x3 pad 1, 256→256    → (256, 8, 8),   ReLU, maxpool 2 → (256, 4, 4)
//               flatten → 4096, dropout 0.5, fc 4096→4096, ReLU,
//                               dropout 0.5, fc 4096→4096, ReLU, fc 4096→classes
// Parameters for (3, 64, 64) and 10 classes:
//   conv 1,792 + 110,784 + 663,936 + 884,992 + 590,080 = 2,251,584
//   fc   16,781,312 + 16,781,312 + 40,970              = 33,603,594      total 35,855,178.
// MACs/sample for (3, 64, 64): conv 1,769,472 + 28,311,552 + 42,467,328 + 56,623,104 +
//   37,748,736 = 166,920,192; fc 33,595,392; total 200,515,584.
// Any H and W that are multiples of 16 fit; the first fc layer then takes 256·(H/16)·(W/16)
// inputs ((3, 32, 32): 1,024, the common CIFAR-10 AlexNet).
std::unique_ptr<Sequential> build_alexnet(const Shape& sample_input, int64_t classes) {
  constexpr int64_t kHidden = 4096;
  const char* accepts = "(C, H, W) with H and W multiples of 16, e.g. (3, 64, 64) or (3, 32, 32)";
  require_image("alexnet", sample_input, accepts);
  const int64_t channels = sample_input[0];
  const int64_t height = sample_input[1];
  const int64_t width = sample_input[2];
  if (height % 16 != 0 || width % 16 != 0) reject_input("alexnet", sample_input, accepts);
  const int64_t features = 256 * (height / 16) * (width / 16);

  auto net = std::make_unique<Sequential>();
  net->emplace<Conv2d>("conv1", channels, 64, 3, 2, 1, true, Init::KaimingNormal);
  net->emplace<ReLU>("relu1", true);
  net->emplace<MaxPool2d>("pool1", 2, 2);
  net->emplace<Conv2d>("conv2", 64, 192, 3, 1, 1, true, Init::KaimingNormal);
  net->emplace<ReLU>("relu2", true);
  net->emplace<MaxPool2d>("pool2", 2, 2);
  net->emplace<Conv2d>("conv3", 192, 384, 3, 1, 1, true, Init::KaimingNormal);
  net->emplace<ReLU>("relu3", true);
  net->emplace<Conv2d>("conv4", 384, 256, 3, 1, 1, true, Init::KaimingNormal);
  net->emplace<ReLU>("relu4", true);
  net->emplace<Conv2d>("conv5", 256, 256, 3, 1, 1, true, Init::KaimingNormal);
  net->emplace<ReLU>("relu5", true);
  net->emplace<MaxPool2d>("pool5", 2, 2);
  net->emplace<Flatten>("flatten");
  net->emplace<Dropout>("dropout1", 0.5f);
  net->emplace<Linear>("fc1", features, kHidden, Init::KaimingNormal);
  net->emplace<ReLU>("relu6", true);
  net->emplace<Dropout>("dropout2", 0.5f);
  net->emplace<Linear>("fc2", kHidden, kHidden, Init::KaimingNormal);
  net->emplace<ReLU>("relu7", true);
  net->emplace<Linear>("fc3", kHidden, classes, Init::XavierUniform);
  return net;
}

}  // namespace dtbench::models::detail
