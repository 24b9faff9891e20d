#include "core/data/cifar_format.h"

#include <algorithm>

#include "core/data/byte_stream.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

constexpr int64_t kCifar100CoarseClasses = 20;

// Reads one file's records, appending labels (and pixels when `pixels` is given).
void read_records(ByteReader& reader, CifarKind kind, std::vector<int32_t>& labels, std::vector<uint8_t>* pixels) {
  const int64_t label_bytes = cifar_label_bytes(kind);
  const int64_t record_bytes = cifar_record_bytes(kind);
  const int64_t classes = cifar_classes(kind);
  if (pixels != nullptr && reader.remaining_bytes() > 0) {
    pixels->reserve(pixels->size() + static_cast<size_t>(reader.remaining_bytes() / record_bytes * kCifarPixelBytes));
  }
  std::vector<uint8_t> record(static_cast<size_t>(record_bytes));
  for (int64_t index = 0;; ++index) {
    const int64_t got = reader.read(record.data(), record_bytes);
    if (got == 0) return;
    if (got < record_bytes) {
      fail_input("{}: file size {} bytes is not a multiple of the record size {} ({} records and {} "
                 "bytes over; truncated?)",
                 reader.path(), index * record_bytes + got, record_bytes, index, got);
    }
    const int32_t fine = record[static_cast<size_t>(label_bytes - 1)];
    if (fine >= classes) {
      fail_input("{}: record {}: label {} out of range: expected 0..{}", reader.path(), index, fine, classes - 1);
    }
    if (kind == CifarKind::cifar100 && record[0] >= kCifar100CoarseClasses) {
      fail_input("{}: record {}: coarse label {} out of range: expected 0..{}", reader.path(), index,
                 record[0], kCifar100CoarseClasses - 1);
    }
    labels.push_back(fine);
    if (pixels != nullptr) pixels->insert(pixels->end(), record.begin() + label_bytes, record.end());
  }
}

}  // namespace

int64_t cifar_classes(CifarKind kind) { return kind == CifarKind::cifar10 ? 10 : 100; }
int64_t cifar_label_bytes(CifarKind kind) { return kind == CifarKind::cifar10 ? 1 : 2; }
int64_t cifar_record_bytes(CifarKind kind) { return cifar_label_bytes(kind) + kCifarPixelBytes; }

DatasetParts read_cifar(const std::vector<std::string>& paths, CifarKind kind, bool cache) {
  DatasetParts parts;
  parts.sources = paths;
  parts.sample_shape = {3, kCifarSide, kCifarSide};
  parts.classes = cifar_classes(kind);
  for (const std::string& path : paths) {
    ByteReader reader(path);
    const int64_t first = static_cast<int64_t>(parts.labels.size());
    std::shared_ptr<RecordFile> inflated;
    if (!cache && reader.gzip()) {
      inflated = RecordFile::temporary(path);
      reader.tee_to(inflated.get());
    }
    read_records(reader, kind, parts.labels, cache ? &parts.pixels : nullptr);
    const int64_t count = static_cast<int64_t>(parts.labels.size()) - first;
    if (cache || count == 0) continue;
    if (inflated) inflated->flush();
    std::shared_ptr<const RecordFile> file = inflated ? inflated : RecordFile::open(path);
    parts.runs.push_back({file, count, cifar_label_bytes(kind), cifar_record_bytes(kind)});
  }
  return parts;
}

void write_cifar(const std::string& path, CifarKind kind, std::span<const uint8_t> pixels,
                 std::span<const int32_t> labels) {
  DTB_CHECK(pixels.size() == labels.size() * kCifarPixelBytes, "{} pixel bytes for {} CIFAR records",
            pixels.size(), labels.size());
  const int64_t label_bytes = cifar_label_bytes(kind);
  std::vector<uint8_t> record(static_cast<size_t>(cifar_record_bytes(kind)));
  ByteWriter writer(path, /*gzip=*/false);
  for (size_t i = 0; i < labels.size(); ++i) {
    DTB_CHECK(labels[i] >= 0 && labels[i] < cifar_classes(kind), "label {} out of range", labels[i]);
    record[static_cast<size_t>(label_bytes - 1)] = static_cast<uint8_t>(labels[i]);
    if (kind == CifarKind::cifar100) record[0] = static_cast<uint8_t>(labels[i] / 5);
    std::copy_n(pixels.data() + i * kCifarPixelBytes, kCifarPixelBytes, record.begin() + label_bytes);
    writer.write(record.data(), static_cast<int64_t>(record.size()));
  }
  writer.commit();
}

}  // namespace dtbench
