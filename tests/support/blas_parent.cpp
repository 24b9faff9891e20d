// A parent for the BLAS-core tests: selects its core as dtbench's main does (re-executing itself when
// told to use another), prints its own decision, then runs the command line it was given through the
// shell and exits with that command's status. So a test can start a dtbench from a process that
// re-executed itself, on any CPU (DTBENCH_BLAS_CORE forces the re-execution), and read the child's
// own decision beside the parent's.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/util/blas.h"

int main(int argc, char** argv) {
  dtbench::blas::select_core(argv);
  std::printf("parent: BLAS core %s (%s)\n", dtbench::blas::core_name().c_str(),
              dtbench::blas::core_selection().c_str());
  std::fflush(stdout);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s 'COMMAND LINE'\n", argv[0]);
    return 2;
  }
  const int status = std::system(argv[1]);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
