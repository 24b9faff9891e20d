#include "core/data/byte_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/data/record_file.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

constexpr int64_t kChunkBytes = 16 << 20;  // gzread takes an unsigned int; read in chunks

std::string gz_message(gzFile file) {
  int code = Z_OK;
  const char* text = gzerror(file, &code);
  return code == Z_ERRNO ? std::strerror(errno) : std::string(text);
}

}  // namespace

ByteReader::ByteReader(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_input("cannot open {}: {}", path, std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    fail_input("cannot read {}: not a regular file", path);
  }
  plain_size_bytes_ = static_cast<int64_t>(info.st_size);
  uint8_t magic[2] = {0, 0};
  gzip_ = ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  file_ = gzdopen(fd, "rb");  // reads a plain file transparently
  if (file_ == nullptr) {
    ::close(fd);
    throw IoError(fmt::format("cannot open {} with zlib", path));
  }
  gzbuffer(file_, 256 * 1024);
}

ByteReader::~ByteReader() {
  if (file_ != nullptr) gzclose(file_);
}

int64_t ByteReader::read(uint8_t* out, int64_t count_bytes) {
  int64_t done = 0;
  while (done < count_bytes) {
    const auto want = static_cast<unsigned>(std::min(count_bytes - done, kChunkBytes));
    const int got = gzread(file_, out + done, want);
    if (got < 0) fail_input("{}: corrupt gzip data after {} bytes: {}", path_, position_ + done, gz_message(file_));
    if (got == 0) break;
    done += got;
  }
  if (tee_ != nullptr && done > 0) tee_->append(out, done);
  position_ += done;
  return done;
}

int64_t ByteReader::read_into(std::vector<uint8_t>& out, int64_t count_bytes) {
  if (!gzip_) out.reserve(out.size() + static_cast<size_t>(std::clamp<int64_t>(remaining_bytes(), 0, count_bytes)));
  int64_t done = 0;
  while (done < count_bytes) {
    const int64_t want = std::min(count_bytes - done, kChunkBytes);
    const size_t old_size = out.size();
    out.resize(old_size + static_cast<size_t>(want));
    const int64_t got = read(out.data() + old_size, want);
    out.resize(old_size + static_cast<size_t>(got));
    done += got;
    if (got < want) break;
  }
  return done;
}

int64_t ByteReader::skip_rest() {
  const int64_t start = position_;
  if (!gzip_ && tee_ == nullptr) {
    position_ = plain_size_bytes_;
    return position_ - start;
  }
  std::vector<uint8_t> chunk(1 << 20);
  while (read(chunk.data(), static_cast<int64_t>(chunk.size())) > 0) {
  }
  return position_ - start;
}

ByteWriter::ByteWriter(std::string path, bool gzip)
    : path_(std::move(path)), temp_path_(fmt::format("{}.tmp-{}", path_, ::getpid())) {
  file_ = gzopen(temp_path_.c_str(), gzip ? "wb6" : "wbT");  // T: plain, no compression
  if (file_ == nullptr) throw IoError(fmt::format("cannot create {}: {}", temp_path_, std::strerror(errno)));
}

ByteWriter::~ByteWriter() {
  if (file_ != nullptr) {
    gzclose(file_);
    std::remove(temp_path_.c_str());
  }
}

void ByteWriter::write(const void* data, int64_t count_bytes) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (int64_t done = 0; done < count_bytes;) {
    const auto want = static_cast<unsigned>(std::min(count_bytes - done, kChunkBytes));
    const int wrote = gzwrite(file_, bytes + done, want);
    if (wrote <= 0) throw IoError(fmt::format("cannot write {}: {}", temp_path_, gz_message(file_)));
    done += wrote;
  }
}

void ByteWriter::commit() {
  const int code = gzclose(file_);
  file_ = nullptr;
  if (code != Z_OK) {
    std::remove(temp_path_.c_str());
    throw IoError(fmt::format("cannot finish writing {} (zlib code {})", temp_path_, code));
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temp_path_.c_str());
    throw IoError(fmt::format("cannot rename {} to {}: {}", temp_path_, path_, reason));
  }
}

}  // namespace dtbench
