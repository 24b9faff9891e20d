#include "core/data/open_dataset.h"

#include <filesystem>

#include <fmt/ranges.h>

#include "core/data/cifar_format.h"
#include "core/data/idx_format.h"
#include "core/util/error.h"

namespace dtbench {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kIdxClasses = 10;

// A data file's name that is there but cannot be read as one (a directory, say) is its own error:
// "not found" would send the user looking for a file that is right there.
void require_file_if_present(const DataSpec& spec, const fs::path& path) {
  if (!fs::exists(path) || fs::is_regular_file(path)) return;
  fail_input("{} data set: {} is {}, not a data file", spec.format, path.string(),
             fs::is_directory(path) ? "a directory" : "not a regular file");
}

// The first of `names` found in `dir`, or "" when none is.
std::string find_one_of(const DataSpec& spec, const fs::path& dir, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    require_file_if_present(spec, dir / name);
    if (fs::is_regular_file(dir / name)) return (dir / name).string();
  }
  return "";
}

[[noreturn]] void fail_missing(const DataSpec& spec, const fs::path& dir, const std::vector<std::string>& missing,
                               const std::vector<std::string>& looked_for, const std::string& where) {
  fail_input("{} data set incomplete in {}: looked for {}{}; not found: {}", spec.format, dir.string(),
             fmt::join(looked_for, ", "), where, fmt::join(missing, ", "));
}

DatasetPair open_idx(const DataSpec& spec, const fs::path& dir) {
  std::vector<std::string> paths, missing, all_names;
  for (const char* split : {"train", "t10k"}) {
    for (const char* kind : {"images-idx3", "labels-idx1"}) {
      const std::string hyphen = fmt::format("{}-{}-ubyte", split, kind);
      const std::string dot = fmt::format("{}.{}-ubyte", split, kind);
      const std::vector<std::string> names = {hyphen, hyphen + ".gz", dot, dot + ".gz"};
      all_names.insert(all_names.end(), names.begin(), names.end());
      paths.push_back(find_one_of(spec, dir, names));
      if (paths.back().empty()) missing.push_back(hyphen + "[.gz]");
    }
  }
  if (!missing.empty()) fail_missing(spec, dir, missing, all_names, "");
  DatasetParts train = read_idx(paths[0], paths[1], kIdxClasses, spec.cache);
  DatasetParts test = read_idx(paths[2], paths[3], kIdxClasses, spec.cache);
  train.name = "idx train";
  test.name = "idx test";
  return {std::make_shared<const Dataset>(std::move(train)), std::make_shared<const Dataset>(std::move(test))};
}

// CIFAR files are looked for in `dir`, or in dir/subdir when that holds them.
DatasetPair open_cifar(const DataSpec& spec, const fs::path& dir, CifarKind kind, const std::string& subdir,
                       const std::vector<std::string>& train_names, const std::vector<std::string>& test_names) {
  std::vector<std::string> names = train_names;
  names.insert(names.end(), test_names.begin(), test_names.end());
  const fs::path root = !fs::exists(dir / names.back()) && fs::exists(dir / subdir / names.back()) ? dir / subdir : dir;
  std::vector<std::string> missing;
  for (const std::string& name : names) {
    require_file_if_present(spec, root / name);
    if (!fs::is_regular_file(root / name)) missing.push_back(name);
  }
  if (!missing.empty()) fail_missing(spec, root, missing, names, fmt::format(" (also under {}/)", subdir));
  const auto full = [&](const std::vector<std::string>& list) {
    std::vector<std::string> paths;
    for (const std::string& name : list) paths.push_back((root / name).string());
    return paths;
  };
  DatasetParts train = read_cifar(full(train_names), kind, spec.cache);
  DatasetParts test = read_cifar(full(test_names), kind, spec.cache);
  train.name = spec.format + " train";
  test.name = spec.format + " test";
  return {std::make_shared<const Dataset>(std::move(train)), std::make_shared<const Dataset>(std::move(test))};
}

}  // namespace

DatasetPair open_dataset(const DataSpec& spec) {
  const fs::path dir(spec.path);
  if (fs::exists(dir) && !fs::is_directory(dir)) {
    fail_input("dataset.path {} is a file, not a directory: point it at the directory holding the {} files", spec.path,
               spec.format);
  }
  if (!fs::is_directory(dir)) fail_input("data set directory {} does not exist (format {})", spec.path, spec.format);
  if (spec.format == "idx") return open_idx(spec, dir);
  if (spec.format == "cifar10") {
    std::vector<std::string> train;
    for (int batch = 1; batch <= 5; ++batch) train.push_back(fmt::format("data_batch_{}.bin", batch));
    return open_cifar(spec, dir, CifarKind::cifar10, "cifar-10-batches-bin", train, {"test_batch.bin"});
  }
  if (spec.format == "cifar100") {
    return open_cifar(spec, dir, CifarKind::cifar100, "cifar-100-binary", {"train.bin"}, {"test.bin"});
  }
  fail_input("unknown data format '{}': expected idx, cifar10 or cifar100", spec.format);
}

}  // namespace dtbench
