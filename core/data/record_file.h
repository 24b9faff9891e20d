#pragma once
// An open file read by offset (pread), shared by the threads that load batches: either the
// original file of a plain data set, or a temporary file holding an inflated .gz input.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dtbench {

class RecordFile {
 public:
  // Opens `path` for reading; InputError naming the path when it cannot.
  static std::shared_ptr<RecordFile> open(const std::string& path);
  // Creates a file under std::filesystem::temp_directory_path() to hold the inflated bytes of
  // `source`. It is unlinked as soon as it is created, so it is gone when the last data set using
  // it is destroyed, and a crash leaves nothing behind.
  static std::shared_ptr<RecordFile> temporary(const std::string& source);

  ~RecordFile();
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  // The file read, or "<inflated copy of SOURCE>" for a temporary file; for messages.
  const std::string& path() const { return path_; }
  int64_t size_bytes() const;

  // Appends to a temporary file (buffered); call flush() before reading from it.
  void append(const uint8_t* data, int64_t count_bytes);
  void flush();

  // Reads exactly `count_bytes` at `offset_bytes`; IoError if the file is now shorter than it was
  // when it was scanned. Safe to call from several threads at once.
  void read_at(int64_t offset_bytes, uint8_t* out, int64_t count_bytes) const;

 private:
  RecordFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
  std::vector<uint8_t> pending_;  // appended bytes not yet written
};

}  // namespace dtbench
