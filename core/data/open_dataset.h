#pragma once
// Opens a data set directory by format and returns its training and test sets.
#include <memory>
#include <string>

#include "core/data/dataset.h"

namespace dtbench {

struct DataSpec {
  std::string format;  // "idx" (MNIST, Fashion-MNIST) | "cifar10" | "cifar100"
  std::string path;    // directory
  bool cache = true;   // false: read each batch's samples from the files
};

struct DatasetPair {
  std::shared_ptr<const Dataset> train;
  std::shared_ptr<const Dataset> test;
};

// Files looked for in spec.path:
//   idx:      {train,t10k}-{images-idx3,labels-idx1}-ubyte, with or without .gz (also the
//             "train-images.idx3-ubyte" spelling)
//   cifar10:  data_batch_1..5.bin, test_batch.bin (or the same under cifar-10-batches-bin/)
//   cifar100: train.bin, test.bin (or the same under cifar-100-binary/)
// InputError for an unknown format or a missing file, listing the names looked for.
DatasetPair open_dataset(const DataSpec& spec);

}  // namespace dtbench
