#include <gtest/gtest.h>

#include "core/util/blas.h"

int main(int argc, char** argv) {
  dtbench::blas::select_core(argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
