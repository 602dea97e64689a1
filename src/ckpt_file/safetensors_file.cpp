#include "ckpt_file/safetensors_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "ckpt_file/checkpoint_error.h"
#include "support/bounded_file.h"
#include "support/json_text.h"
#include "support/text.h"

namespace hpctrain::ckpt_file {
namespace {

constexpr int kMaxHeaderDepth = 4;  // {"name": {"shape": [..]}} and __metadata__
constexpr std::size_t kMaxTensorName = 4096;
constexpr std::size_t kMaxRank = 16;

std::size_t element_bytes(TensorDtype dtype) { return dtype == TensorDtype::kF32 ? 4 : 2; }

std::uint64_t little_endian_u64(const std::string& bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8U) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  return value;
}

// IEEE half to single, exactly (every half is a float).
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000U) << 16U;
  std::uint32_t exponent = (h >> 10U) & 0x1FU;
  std::uint32_t mantissa = h & 0x3FFU;
  std::uint32_t bits = 0;
  if (exponent == 0x1FU) {
    bits = sign | 0x7F800000U | (mantissa << 13U);  // infinity or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112U) << 23U) | (mantissa << 13U);
  } else if (mantissa != 0) {
    // Subnormal: normalise it.
    exponent = 113;
    while ((mantissa & 0x400U) == 0) {
      mantissa <<= 1U;
      --exponent;
    }
    bits = sign | (exponent << 23U) | ((mantissa & 0x3FFU) << 13U);
  } else {
    bits = sign;
  }
  float out = 0;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

TensorDtype parse_dtype(const nlohmann::json& value, const std::string& where) {
  if (!value.is_string()) throw CheckpointError(fmt::format("{}: dtype is not a string", where));
  const auto& name = value.get_ref<const std::string&>();
  if (name == "F32") return TensorDtype::kF32;
  if (name == "F16") return TensorDtype::kF16;
  if (name == "BF16") return TensorDtype::kBF16;
  throw CheckpointError(fmt::format("{}: dtype {} is not one hpctrain reads (F32, F16, BF16)", where,
                                    support::printable(name.substr(0, 32))));
}

std::uint64_t non_negative(const nlohmann::json& value, const std::string& where) {
  if (!value.is_number_unsigned()) throw CheckpointError(fmt::format("{}: not a non-negative integer", where));
  return value.get<std::uint64_t>();
}

SafetensorsEntry parse_entry(const std::string& name, const nlohmann::json& value, const std::string& file) {
  if (name.empty() || name.size() > kMaxTensorName) {
    throw CheckpointError(fmt::format("{}: a tensor name of {} bytes (1 to {})", file, name.size(), kMaxTensorName));
  }
  const std::string where = fmt::format("{}: tensor {}", file, support::printable(name));
  if (!value.is_object()) throw CheckpointError(fmt::format("{}: its entry is not an object", where));
  for (const auto& [key, unused] : value.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      throw CheckpointError(fmt::format("{}: unknown field {}", where, support::printable(key.substr(0, 32))));
    }
  }
  if (!value.contains("dtype") || !value.contains("shape") || !value.contains("data_offsets")) {
    throw CheckpointError(fmt::format("{}: needs dtype, shape and data_offsets", where));
  }
  SafetensorsEntry entry;
  entry.name = name;
  entry.dtype = parse_dtype(value["dtype"], where);
  const auto& shape = value["shape"];
  if (!shape.is_array() || shape.size() > kMaxRank) {
    throw CheckpointError(fmt::format("{}: shape is not an array of at most {} sizes", where, kMaxRank));
  }
  std::uint64_t elements = 1;
  for (const auto& size : shape) {
    const std::uint64_t n = non_negative(size, where + ": a shape's size");
    if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        (n != 0 && elements > std::numeric_limits<std::uint64_t>::max() / n)) {
      throw CheckpointError(fmt::format("{}: shape's element count overflows", where));
    }
    elements *= n;
    entry.shape.push_back(static_cast<std::int64_t>(n));
  }
  const auto& offsets = value["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    throw CheckpointError(fmt::format("{}: data_offsets is not [begin, end]", where));
  }
  entry.begin = non_negative(offsets[0], where + ": data_offsets' begin");
  entry.end = non_negative(offsets[1], where + ": data_offsets' end");
  if (entry.end < entry.begin) {
    throw CheckpointError(
        fmt::format("{}: data_offsets [{}, {}] end before they begin", where, entry.begin, entry.end));
  }
  const std::uint64_t width = element_bytes(entry.dtype);
  if (elements > std::numeric_limits<std::uint64_t>::max() / width || elements * width != entry.end - entry.begin) {
    throw CheckpointError(fmt::format("{}: shape [{}] of {} takes {} bytes, and data_offsets [{}, {}] hold {}", where,
                                      fmt::join(entry.shape, ", "), dtype_name(entry.dtype),
                                      elements > std::numeric_limits<std::uint64_t>::max() / width
                                          ? std::string("more than 2^64")
                                          : std::to_string(elements * width),
                                      entry.begin, entry.end, entry.end - entry.begin));
  }
  return entry;
}

}  // namespace

const char* dtype_name(TensorDtype dtype) {
  switch (dtype) {
    case TensorDtype::kF32: return "F32";
    case TensorDtype::kF16: return "F16";
    case TensorDtype::kBF16: return "BF16";
  }
  return "?";
}

std::uint64_t SafetensorsEntry::elements() const { return (end - begin) / element_bytes(dtype); }

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : file_(path, "safetensors file") {
  const std::uint64_t size = file_.size();
  const std::string head = file_.read_at(0, 8);
  if (head.size() < 8) {
    throw CheckpointError(fmt::format("{}: {} bytes, shorter than a safetensors header's length", name(), size));
  }
  const std::uint64_t header_bytes = little_endian_u64(head);
  if (header_bytes > kMaxHeaderBytes) {
    throw CheckpointError(fmt::format("{}: a header of {} bytes, more than safetensors allows ({})", name(),
                                      header_bytes, kMaxHeaderBytes));
  }
  if (header_bytes > size - 8) {
    throw CheckpointError(fmt::format("{}: the header claims {} bytes, and the file has {} after its length", name(),
                                      header_bytes, size - 8));
  }
  const std::string text = file_.read_at(8, static_cast<std::size_t>(header_bytes));
  if (text.size() != header_bytes)
    throw CheckpointError(fmt::format("{}: the header was cut short while read", name()));
  nlohmann::json header;
  try {
    header = support::parse_json_text(text, name() + ": header", kMaxHeaderDepth);
  } catch (const support::InputError& e) {
    throw CheckpointError(e.what());
  }
  if (!header.is_object()) throw CheckpointError(fmt::format("{}: the header is not a JSON object", name()));

  const std::uint64_t data_start = 8 + header_bytes;
  const std::uint64_t data_bytes = size - data_start;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) throw CheckpointError(fmt::format("{}: __metadata__ is not an object", name()));
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) {
          throw CheckpointError(
              fmt::format("{}: __metadata__ {} is not a string", name(), support::printable(k.substr(0, 64))));
        }
        metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    SafetensorsEntry entry = parse_entry(key, value, name());
    if (entry.end > data_bytes) {
      throw CheckpointError(fmt::format("{}: tensor {}: data_offsets [{}, {}] run past the data's {} bytes", name(),
                                        support::printable(key), entry.begin, entry.end, data_bytes));
    }
    entry.begin += data_start;
    entry.end += data_start;
    entries_.push_back(std::move(entry));
  }
  // The data, in order: each tensor starts where the one before it ends, and
  // the last ends with the file (no overlap, no hole, nothing after).
  std::sort(entries_.begin(), entries_.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t at = data_start;
  const SafetensorsEntry* previous = nullptr;
  for (const auto& entry : entries_) {
    if (entry.begin < at) {
      throw CheckpointError(fmt::format("{}: tensor {}: its bytes overlap tensor {}'s", name(),
                                        support::printable(entry.name), support::printable(previous->name)));
    }
    if (entry.begin > at) {
      throw CheckpointError(fmt::format("{}: bytes {} to {} of the data belong to no tensor (before {})", name(),
                                        at - data_start, entry.begin - data_start, support::printable(entry.name)));
    }
    at = entry.end;
    previous = &entry;
  }
  if (at != size) {
    throw CheckpointError(
        fmt::format("{}: {} bytes after the last tensor's data belong to no tensor", name(), size - at));
  }
  for (std::size_t i = 0; i < entries_.size(); ++i) by_name_.emplace(entries_[i].name, i);
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& tensor) const {
  const auto it = by_name_.find(tensor);
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

std::vector<float> SafetensorsFile::read_float32(const SafetensorsEntry& entry) const {
  const std::uint64_t bytes = entry.end - entry.begin;
  if (bytes > std::numeric_limits<std::size_t>::max()) {
    throw CheckpointError(fmt::format("{}: tensor {}: too large to read", name(), support::printable(entry.name)));
  }
  const std::string raw = file_.read_at(entry.begin, static_cast<std::size_t>(bytes));
  if (raw.size() != bytes) {
    throw CheckpointError(
        fmt::format("{}: tensor {}: the file was cut short while read", name(), support::printable(entry.name)));
  }
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");
  const std::size_t n = static_cast<std::size_t>(entry.elements());
  std::vector<float> out(n);
  if (entry.dtype == TensorDtype::kF32) {
    std::memcpy(out.data(), raw.data(), raw.size());
    return out;
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::uint16_t half = 0;
    std::memcpy(&half, raw.data() + 2 * i, 2);
    if (entry.dtype == TensorDtype::kF16) {
      out[i] = half_to_float(half);
    } else {
      const std::uint32_t bits = static_cast<std::uint32_t>(half) << 16U;  // bfloat16 is float32's top half
      std::memcpy(&out[i], &bits, sizeof bits);
    }
  }
  return out;
}

}  // namespace hpctrain::ckpt_file
