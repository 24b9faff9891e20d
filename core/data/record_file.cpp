#include "core/data/record_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/util/error.h"

namespace dtbench {

namespace {

constexpr int64_t kAppendBufferBytes = 1 << 20;

}  // namespace

std::shared_ptr<RecordFile> RecordFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_input("cannot open {}: {}", path, std::strerror(errno));
  return std::shared_ptr<RecordFile>(new RecordFile(fd, path));
}

std::shared_ptr<RecordFile> RecordFile::temporary(const std::string& source) {
  std::string name = (std::filesystem::temp_directory_path() / "dtbench-data-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw IoError(fmt::format("cannot create a temporary file {} to inflate {}: {}", name,
                                        source, std::strerror(errno)));
  ::unlink(name.c_str());
  auto file = std::shared_ptr<RecordFile>(new RecordFile(fd, "<inflated copy of " + source + ">"));
  file->pending_.reserve(kAppendBufferBytes);
  return file;
}

RecordFile::~RecordFile() { ::close(fd_); }

int64_t RecordFile::size_bytes() const {
  struct stat info {};
  if (::fstat(fd_, &info) != 0) throw IoError(fmt::format("cannot stat {}: {}", path_, std::strerror(errno)));
  return static_cast<int64_t>(info.st_size);
}

void RecordFile::append(const uint8_t* data, int64_t count_bytes) {
  pending_.insert(pending_.end(), data, data + count_bytes);
  if (static_cast<int64_t>(pending_.size()) >= kAppendBufferBytes) flush();
}

void RecordFile::flush() {
  size_t done = 0;
  while (done < pending_.size()) {
    const ssize_t written = ::write(fd_, pending_.data() + done, pending_.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw IoError(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
    done += static_cast<size_t>(written);
  }
  pending_.clear();
}

void RecordFile::read_at(int64_t offset_bytes, uint8_t* out, int64_t count_bytes) const {
  int64_t done = 0;
  while (done < count_bytes) {
    const ssize_t got = ::pread(fd_, out + done, static_cast<size_t>(count_bytes - done),
                                static_cast<off_t>(offset_bytes + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw IoError(fmt::format("cannot read {}: {}", path_, std::strerror(errno)));
    if (got == 0) {
      throw IoError(fmt::format("{}: expected {} bytes at offset {}, found the end of the file after "
                                "{} (did the file change?)",
                                path_, count_bytes, offset_bytes, done));
    }
    done += got;
  }
}

}  // namespace dtbench
