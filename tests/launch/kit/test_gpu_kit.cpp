// The GPU kit (scripts/gpu-kit.sh), checked where it is built, without a GPU: its programs, mpirun
// with Open MPI's plugins and a test binary run through the kit's own loader with no library taken
// from the machine's own folders (LD_DEBUG=libs shows every library each program initialised), a
// GPU step fails with dtbench's clear error, and the whole check script passes its rehearsal on the
// CPU. A GPU machine may be borrowed for minutes: the kit must work there the first time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/cuda/register.h"
#include "support/cli_helpers.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
using testing::Outcome;
using testing::shell;

const fs::path kSource = fs::path(DTBENCH_CONFIGS_DIR).parent_path();
const fs::path kBuild = fs::path(DTBENCH_BINARY).parent_path();

// What LD_DEBUG=libs printed for the programs started through `kit`'s loader: per program image,
// the libraries it initialised. Each image begins with its loader's own "calling init" line, so a
// process that execs (the kit's wrappers are shell scripts) splits into its images there. The
// lines begin with the process id.
struct KitImage {
  std::string program;
  std::vector<std::string> libraries;
};

std::vector<KitImage> kit_images(const std::string& output, const fs::path& kit) {
  const std::string kit_loader = (kit / "lib" / "ld-linux-x86-64.so.2").string();
  std::map<std::string, KitImage*> current;  // per process id: its image under the kit's loader, if any
  std::vector<std::unique_ptr<KitImage>> images;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string pid = line.substr(0, colon);
    if (pid.find_first_not_of(" 0123456789") != std::string::npos) continue;  // the programs' own output
    const auto value_of = [&](const std::string& key) -> std::string {
      const size_t at = line.find(key);
      return at == std::string::npos ? "" : line.substr(at + key.size());
    };
    if (const std::string library = value_of("calling init: "); !library.empty()) {
      if (library.ends_with("ld-linux-x86-64.so.2")) {  // a new image of this process
        current[pid] = nullptr;
        if (library == kit_loader) {
          images.push_back(std::make_unique<KitImage>());
          current[pid] = images.back().get();
        }
      }
      if (KitImage* image = current[pid]) image->libraries.push_back(library);
    } else if (const std::string program = value_of("initialize program: "); !program.empty()) {
      if (KitImage* image = current[pid]) image->program = program;
    }
  }
  std::vector<KitImage> result;
  for (const auto& image : images) result.push_back(*image);
  return result;
}

class GpuKit : public ::testing::Test {
 protected:
  // CTest packs the kit once for all of these tests (the fixture gpu_kit, tests/CMakeLists.txt) and
  // names its folder in DTBENCH_TEST_PACKED_KIT; run alone, the test binary packs its own.
  static void SetUpTestSuite() {
    out_ = new fs::path(fs::temp_directory_path() / ("dtbench-gpu-kit-test-" + std::to_string(getpid())));
    fs::create_directories(*out_);
    const char* packed = std::getenv("DTBENCH_TEST_PACKED_KIT");
    if (packed != nullptr && fs::exists(fs::path(packed) / "kit" / "bin" / "run")) {
      packed_ = new fs::path(packed);
      built_ = new Outcome{0, ""};
      return;
    }
    packed_ = new fs::path(*out_);
    built_ = new Outcome(shell((kSource / "scripts" / "gpu-kit.sh").string() + " --build " + kBuild.string() +
                               " --no-archive " + out_->string()));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*out_);
    delete out_;
    delete packed_;
    delete built_;
  }
  void SetUp() override {
    if (shell("ldd " + std::string(DTBENCH_BINARY) + " | grep -q libcudart").exit_code != 0) {
      GTEST_SKIP() << "dtbench was built without the CUDA toolkit: there is no GPU build to pack";
    }
    ASSERT_EQ(built_->exit_code, 0) << built_->output;
    kit_ = *packed_ / "kit";
  }

  // `command` with LD_DEBUG=libs: its exit code, its output, and that every image the kit's loader
  // started took each library from the kit or from the CUDA folders (DTBENCH_KIT_CUDA_PATH) alone.
  Outcome run_checked(const std::string& command, int expected_images = 1) {
    const Outcome cuda_path = shell((kit_ / "bin" / "cuda-library-path").string() + " " + kit_.string());
    std::vector<std::string> allowed = {kit_.string() + "/"};
    std::istringstream folders(cuda_path.output.substr(0, cuda_path.output.find('\n')));
    for (std::string folder; std::getline(folders, folder, ':');) {
      if (!folder.empty()) allowed.push_back(folder + "/");
    }
    // Each process writes its own file (LD_DEBUG_OUTPUT.<pid>): ranks writing at once into one
    // pipe would cut each other's lines.
    const fs::path debug = *out_ / ("ld-debug-" + std::to_string(++runs_));
    fs::create_directories(debug);
    Outcome r = shell("LD_DEBUG=libs LD_DEBUG_OUTPUT=" + (debug / "ld").string() + " " + command);
    std::vector<KitImage> images;
    for (const auto& entry : fs::directory_iterator(debug)) {
      for (KitImage& image : kit_images(testing::read_text(entry.path()), kit_)) images.push_back(std::move(image));
    }
    fs::remove_all(debug);
    EXPECT_GE(static_cast<int>(images.size()), expected_images) << command;
    for (const KitImage& image : images) {
      bool took_kits_libc = false;
      for (const std::string& library : image.libraries) {
        bool inside = false;
        for (const std::string& folder : allowed) inside = inside || library.starts_with(folder);
        EXPECT_TRUE(inside) << image.program << " took " << library << " from outside the kit and the CUDA folders";
        took_kits_libc = took_kits_libc || library == (kit_ / "lib" / "libc.so.6").string();
      }
      EXPECT_TRUE(took_kits_libc) << image.program << " did not run on the kit's C library";
    }
    for (const KitImage& image : images) {
      for (const std::string& library : image.libraries) r.output += "\nloaded: " + library;
    }
    return r;
  }

  static fs::path* out_;     // this process's own files
  static fs::path* packed_;  // holds the kit/ under test
  static Outcome* built_;
  fs::path kit_;
  int runs_ = 0;
};

fs::path* GpuKit::out_ = nullptr;
fs::path* GpuKit::packed_ = nullptr;
Outcome* GpuKit::built_ = nullptr;

TEST_F(GpuKit, DtbenchRunsOnTheKitsLibrariesAlone) {
  const Outcome version = run_checked((kit_ / "bin" / "dtbench").string() + " --version");
  EXPECT_EQ(version.exit_code, 0) << version.output;
  EXPECT_NE(version.output.find("dtbench "), std::string::npos) << version.output;

  const Outcome step = run_checked((kit_ / "bin" / "dtbench").string() +
                                   " bench step --device cpu --model lenet5 --batch 4 --steps 1 --warmup 0");
  EXPECT_EQ(step.exit_code, 0) << step.output;
  EXPECT_NE(step.output.find("loaded: " + (kit_ / "lib" / "libopenblas.so.0").string()), std::string::npos);
  EXPECT_NE(step.output.find("loaded: " + (kit_ / "lib" / "libgrpc.so.29").string()), std::string::npos);
}

TEST_F(GpuKit, ACpuTestBinaryRunsThroughTheLauncher) {
  const Outcome r =
      run_checked((kit_ / "bin" / "run").string() + " " + (kBuild / "tests" / "test_conv_lanes").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[  PASSED  ]"), std::string::npos) << r.output;
}

// cuBLAS, which dtbench opens only when a GPU step starts, is found through the kit's loader among
// the machine's CUDA libraries.
TEST_F(GpuKit, CublasOpensThroughTheKitsLoader) {
  const Outcome r = run_checked((kit_ / "bin" / "test_cublas_library").string() +
                                " --gtest_filter=CublasLibrary.IsOpenedOnFirstUse*");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("libcublasLt.so"), std::string::npos) << r.output;
  EXPECT_NE(testing::read_text(kit_ / "MANIFEST").find("libcublas.so."), std::string::npos);
}

// mpirun (Open MPI's orterun), its plugins and both ranks: all from the kit.
TEST_F(GpuKit, MpirunAndItsRanksRunFromTheKit) {
  const Outcome r =
      run_checked("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + (kit_ / "bin" / "mpirun").string() +
                      " --oversubscribe -np 2 " + (kit_ / "bin" / "dtbench").string() +
                      " bench allreduce --sizes 4B:64KiB --iters 2",
                  3);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("loaded: " + (kit_ / "root").string() +
                          "/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so"),
            std::string::npos)
      << "Open MPI's shared-memory plugin was not taken from the kit";
}

// As on a GPU machine without them: Open MPI, PMIx, hwloc, OpenBLAS, gRPC, protobuf, fmt and
// libstdc++ of this machine hidden (a mount namespace of this test alone), mpirun with two ranks
// and a training step still run from the kit.
TEST_F(GpuKit, RunsWithTheMachinesOwnMpiBlasAndGrpcHidden) {
  if (geteuid() != 0) GTEST_SKIP() << "hiding the machine's libraries needs root (a mount namespace)";
  const fs::path script = *out_ / "hidden.sh";
  {
    std::ofstream file(script);
    file << "set -e\n"
         // Files first (their real paths may lie in the folders hidden next).
         << "for name in libmpi.so.40 libopen-rte.so.40 libopen-pal.so.40 libpmix.so.2 libhwloc.so.15 libgrpc.so.29 "
            "libprotobuf.so.32 libfmt.so.9 libspdlog.so.1.10 libstdc++.so.6; do\n"
         << "  file=$(readlink -f /usr/lib/x86_64-linux-gnu/$name) || continue\n"
         << "  [ -e \"$file\" ] && mount --bind /dev/null \"$file\"\n"
         << "done\n"
         << "for dir in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 "
            "/usr/lib/x86_64-linux-gnu/openblas-pthread /usr/lib/x86_64-linux-gnu/hwloc /usr/share/openmpi "
            "/etc/openmpi; do\n"
         << "  [ -d \"$dir\" ] && mount -t tmpfs none \"$dir\"\n"
         << "done\n"
         << "test ! -s /usr/lib/x86_64-linux-gnu/libgrpc.so.29\n"
         << "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
         << "'" << (kit_ / "bin" / "mpirun").string() << "' --oversubscribe -np 2 '"
         << (kit_ / "bin" / "dtbench").string() << "' bench allreduce --sizes 4B:1MiB --iters 2\n"
         << "'" << (kit_ / "bin" / "dtbench").string()
         << "' bench step --device cpu --model lenet5 --batch 4 --steps 1 --warmup 0\n";
  }
  const Outcome r = shell("unshare -m bash " + script.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("     1 MiB "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("lenet5 "), std::string::npos) << r.output;
}

TEST_F(GpuKit, AGpuStepWithoutAGpuFailsWithTheClearError) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  const Outcome r = shell((kit_ / "bin" / "dtbench").string() +
                          " bench step --device cuda --model mlp --batch 2 --steps 1 --warmup 0");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("device 'cuda': no usable CUDA device"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("use device: cpu"), std::string::npos) << r.output;
}

// dtbench re-executes itself to raise OpenBLAS's core; under the kit's loader /proc/self/exe is the
// loader, so the re-execution must repeat the loader's own arguments.
TEST_F(GpuKit, OpenBlasCoreIsRaisedThroughTheKitsLoader) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "no AVX2 and FMA here";
  const Outcome r = shell("OPENBLAS_CORETYPE=Prescott " + (kit_ / "bin" / "dtbench").string() +
                          " bench step --device cpu --model mlp --batch 2 --steps 1 --warmup 0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("BLAS core "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("BLAS core Prescott"), std::string::npos) << r.output;
}

// The check script a GPU machine runs, end to end on the CPU (--rehearse), from the packed kit: every
// check passes and its results stay within 8 files (what a borrowed machine may give back).
TEST_F(GpuKit, TheCheckScriptPassesItsRehearsalFromThePackedKit) {
  if (shell("/usr/bin/python3 -c 'import torch'").exit_code != 0) GTEST_SKIP() << "python3-torch is not installed";
  const fs::path packed = *out_ / "packed";
  const Outcome pack = shell("DTBENCH_KIT_XZ=0 " + (kSource / "scripts" / "gpu-kit.sh").string() + " --build " +
                             kBuild.string() + " " + packed.string());
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  ASSERT_TRUE(fs::exists(packed / "kit.tar.xz"));
  ASSERT_FALSE(fs::exists(packed / "kit"));
  const fs::path results = *out_ / "results";
  const Outcome r = shell("cd " + kSource.string() + " && OUT=" + results.string() + " TMPDIR=" + out_->string() +
                          " TORCH_PYTHON=/usr/bin/python3 bash " + (packed / "run-gpu-checks.sh").string() +
                          " --rehearse");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string summary = testing::read_text(results / "summary.md");
  EXPECT_EQ(summary.find("| FAIL"), std::string::npos) << summary << "\ndevice_marks.txt:\n"
                                                     << testing::read_text(results / "device_marks.txt");
  for (const char* check : {"kit starts", "gpu tests: training", "bench step vs PyTorch", "staged ring",
                            "device marks overhead"}) {
    EXPECT_NE(summary.find(std::string("| ") + check), std::string::npos) << check << "\n" << summary;
  }
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(results)) files += entry.is_regular_file() ? 1 : 0;
  EXPECT_LE(files, 8) << "the results must fit in 8 files";
  EXPECT_NE(testing::read_text(results / "device_marks.txt").find("device_marks=false"), std::string::npos);
}

}  // namespace
}  // namespace dtbench
