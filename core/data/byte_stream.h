#pragma once
// Sequential reading and writing of data files, plain or gzip. A gzip file is recognised by its
// magic bytes (1f 8b), never by its name.
#include <cstdint>
#include <string>
#include <vector>

struct gzFile_s;

namespace dtbench {

class RecordFile;

class ByteReader {
 public:
  // InputError naming the path when the file cannot be opened.
  explicit ByteReader(const std::string& path);
  ~ByteReader();
  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;

  const std::string& path() const { return path_; }
  bool gzip() const { return gzip_; }
  // Uncompressed bytes delivered so far.
  int64_t position() const { return position_; }
  // Uncompressed bytes left: exact for a plain file, -1 (unknown) for gzip.
  int64_t remaining_bytes() const { return gzip_ ? -1 : plain_size_bytes_ - position_; }

  // Reads up to `count_bytes`; fewer only at the end of the file. InputError on corrupt gzip data.
  int64_t read(uint8_t* out, int64_t count_bytes);
  // Appends up to `count_bytes` to `out`, growing it as data arrives (so a corrupt header that
  // claims a huge size does not allocate before the data runs out). Returns the bytes appended.
  int64_t read_into(std::vector<uint8_t>& out, int64_t count_bytes);
  // Consumes the rest of the file and returns its length in bytes.
  int64_t skip_rest();
  // From now on every byte read is also appended to `sink` (a temporary RecordFile).
  void tee_to(RecordFile* sink) { tee_ = sink; }

 private:
  std::string path_;
  gzFile_s* file_ = nullptr;
  bool gzip_ = false;
  int64_t plain_size_bytes_ = 0;
  int64_t position_ = 0;
  RecordFile* tee_ = nullptr;
};

// Writes a file, plain or gzip, under a temporary name that commit() renames into place, so a
// crash never leaves half a file. IoError when writing fails.
class ByteWriter {
 public:
  ByteWriter(std::string path, bool gzip);
  ~ByteWriter();  // removes the temporary file if commit() was not reached
  ByteWriter(const ByteWriter&) = delete;
  ByteWriter& operator=(const ByteWriter&) = delete;

  void write(const void* data, int64_t count_bytes);
  void commit();

 private:
  std::string path_;
  std::string temp_path_;
  gzFile_s* file_ = nullptr;
};

}  // namespace dtbench
