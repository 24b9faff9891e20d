#include "core/data/idx_format.h"

#include "core/data/byte_stream.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

constexpr int64_t kImagesHeaderBytes = 16;
constexpr int64_t kLabelsHeaderBytes = 8;

uint32_t load_big_endian(const uint8_t* bytes) {
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) | bytes[3];
}

void store_big_endian(uint8_t* bytes, uint32_t value) {
  bytes[0] = static_cast<uint8_t>(value >> 24);
  bytes[1] = static_cast<uint8_t>(value >> 16);
  bytes[2] = static_cast<uint8_t>(value >> 8);
  bytes[3] = static_cast<uint8_t>(value);
}

// Reads the header's `count` big-endian words after checking the size and the magic number.
std::vector<uint32_t> read_header(ByteReader& reader, uint32_t magic, int64_t words, const char* what) {
  uint8_t header[16];
  const int64_t header_bytes = words * 4;
  const int64_t got = reader.read(header, header_bytes);
  if (got < header_bytes) {
    fail_input("{}: truncated: expected a {}-byte IDX {} header, found {} bytes", reader.path(),
               header_bytes, what, got);
  }
  const uint32_t found = load_big_endian(header);
  if (found != magic) {
    fail_input("{}: wrong magic number: expected 0x{:08x} (IDX {}), found 0x{:08x}", reader.path(),
               magic, what, found);
  }
  std::vector<uint32_t> values;
  for (int64_t word = 1; word < words; ++word) values.push_back(load_big_endian(header + 4 * word));
  return values;
}

// Checks that exactly `expected_bytes` followed the header, naming what they hold.
void check_payload(const ByteReader& reader, int64_t found_bytes, int64_t expected_bytes, const std::string& what) {
  if (found_bytes < expected_bytes) {
    fail_input("{}: truncated: expected {} bytes for {}, found {}", reader.path(), expected_bytes, what, found_bytes);
  }
  if (found_bytes > expected_bytes) {
    fail_input("{}: expected {} bytes for {}, found {} (trailing data)", reader.path(), expected_bytes,
               what, found_bytes);
  }
}

std::vector<int32_t> read_labels(const std::string& path, int64_t classes) {
  ByteReader reader(path);
  const uint32_t count = read_header(reader, kIdxLabelsMagic, 2, "labels")[0];
  std::vector<uint8_t> bytes;
  reader.read_into(bytes, count);
  const int64_t extra = reader.skip_rest();
  check_payload(reader, static_cast<int64_t>(bytes.size()) + extra, count, fmt::format("{} labels", count));
  std::vector<int32_t> labels(bytes.begin(), bytes.end());
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= classes) {
      fail_input("{}: label {} of sample {} out of range: expected 0..{}", path, labels[i], i, classes - 1);
    }
  }
  return labels;
}

}  // namespace

DatasetParts read_idx(const std::string& images_path, const std::string& labels_path,
                      int64_t classes, bool cache) {
  DatasetParts parts;
  parts.sources = {images_path, labels_path};
  parts.classes = classes;
  parts.labels = read_labels(labels_path, classes);

  ByteReader reader(images_path);
  std::shared_ptr<RecordFile> inflated;
  if (!cache && reader.gzip()) {
    inflated = RecordFile::temporary(images_path);
    reader.tee_to(inflated.get());
  }
  const std::vector<uint32_t> dims = read_header(reader, kIdxImagesMagic, 4, "images");
  const int64_t count = dims[0], height = dims[1], width = dims[2];
  if (height == 0 || width == 0) fail_input("{}: IDX header gives an empty image size {}x{}", images_path, height, width);
  if (count != static_cast<int64_t>(parts.labels.size())) {
    fail_input("{}: image count {} does not match the label count {} in {}", images_path, count,
               parts.labels.size(), labels_path);
  }
  parts.sample_shape = {1, height, width};
  const int64_t sample_bytes = height * width;
  const std::string what = fmt::format("{} images of {}x{}", count, height, width);
  if (cache) {
    reader.read_into(parts.pixels, count * sample_bytes);
    const int64_t extra = reader.skip_rest();
    check_payload(reader, static_cast<int64_t>(parts.pixels.size()) + extra, count * sample_bytes, what);
  } else {
    check_payload(reader, reader.skip_rest(), count * sample_bytes, what);
    if (inflated) {
      inflated->flush();
    }
    std::shared_ptr<const RecordFile> file = inflated ? inflated : RecordFile::open(images_path);
    if (count > 0) parts.runs.push_back({file, count, kImagesHeaderBytes, sample_bytes});
  }
  return parts;
}

void write_idx_images(const std::string& path, std::span<const uint8_t> pixels, int64_t count,
                      int64_t height, int64_t width, bool gzip) {
  DTB_CHECK(static_cast<int64_t>(pixels.size()) == count * height * width, "{} pixel bytes for {} images of {}x{}",
            pixels.size(), count, height, width);
  uint8_t header[kImagesHeaderBytes];
  store_big_endian(header, kIdxImagesMagic);
  store_big_endian(header + 4, static_cast<uint32_t>(count));
  store_big_endian(header + 8, static_cast<uint32_t>(height));
  store_big_endian(header + 12, static_cast<uint32_t>(width));
  ByteWriter writer(path, gzip);
  writer.write(header, sizeof(header));
  writer.write(pixels.data(), static_cast<int64_t>(pixels.size()));
  writer.commit();
}

void write_idx_labels(const std::string& path, std::span<const int32_t> labels, bool gzip) {
  uint8_t header[kLabelsHeaderBytes];
  store_big_endian(header, kIdxLabelsMagic);
  store_big_endian(header + 4, static_cast<uint32_t>(labels.size()));
  std::vector<uint8_t> bytes(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    DTB_CHECK(labels[i] >= 0 && labels[i] < 256, "label {} does not fit a byte", labels[i]);
    bytes[i] = static_cast<uint8_t>(labels[i]);
  }
  ByteWriter writer(path, gzip);
  writer.write(header, sizeof(header));
  writer.write(bytes.data(), static_cast<int64_t>(bytes.size()));
  writer.commit();
}

}  // namespace dtbench
