#pragma once
// What a run is called: the configuration that ran, not the file it came from. `--set
// model=resnet18 --set dataset.format=cifar10` on the LeNet-5 / Fashion-MNIST blueprint runs
// ResNet-18 on CIFAR-10, and its run directory must say so.
#include <string>

#include "launch/blueprint/blueprint.h"

namespace dtbench {

// "<model>-<data set>[-<engine>]-<transport>[-<device>]": the engine only when it is not dtbench's
// own, the device only when it is not the CPU. E.g. "resnet18-cifar10-ring",
// "lenet5-fashion-mnist-pytorch-ddp", "vgg16-cifar10-nccl-cuda".
std::string run_name(const Blueprint& bp);

// The data set a blueprint trains on, as a name: cifar10 and cifar100 by their format; IDX files
// by their folder when it names MNIST or Fashion-MNIST ("fashion-mnist", "mnist"), else "idx".
std::string data_set_name(const DataBlueprint& data);

}  // namespace dtbench
