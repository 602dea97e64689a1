// Safetensors files and HF model directories from elsewhere (model.init_from):
// files laid out byte by byte as the format defines them, read back exactly
// (F32, F16 with its subnormals and infinities, BF16); hostile ones refused
// with one line naming the file and, where there is one, the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "ckpt_file/checkpoint_error.h"
#include "ckpt_file/hf_weights.h"
#include "ckpt_file/safetensors_file.h"
#include "scratch_dir_test.h"

namespace hpctrain::ckpt_file {
namespace {
namespace fs = std::filesystem;

std::string le64(std::uint64_t value) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xFFU);
  return out;
}

template <class T>
std::string raw(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// A file: the header's text as given, then the data.
std::string file_of(const std::string& header, const std::string& data) { return le64(header.size()) + header + data; }

class SafetensorsFileTest : public unit::ScratchDirTest {
 protected:
  fs::path write(const std::string& name, const std::string& bytes) {
    fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
  }
  // The one-line error opening `bytes` as a safetensors file gives.
  std::string refusal(const std::string& bytes) {
    const fs::path path = write("bad.safetensors", bytes);
    try {
      const SafetensorsFile file(path);
      for (const auto& entry : file.entries()) (void)file.read_float32(entry);
    } catch (const CheckpointError& e) {
      std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_NE(message.find(path.string()), std::string::npos) << message;
      return message;
    }
    ADD_FAILURE() << "accepted";
    return {};
  }
};

TEST_F(SafetensorsFileTest, ReadsEachDtypeExactly) {
  const std::string f32 = raw(std::vector<float>{1.5F, -2.0F, 1e-30F});
  // F16: 1, the smallest subnormal (2^-24), infinity, -2^-14 (the smallest normal, negative).
  const std::string f16 = raw(std::vector<std::uint16_t>{0x3C00, 0x0001, 0x7C00, 0x8400});
  const std::string bf16 = raw(std::vector<std::uint16_t>{0x3F80, 0xC020});  // 1, -2.5
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
      R"("b":{"dtype":"F16","shape":[2,2],"data_offsets":[12,20]},)"
      R"("c":{"dtype":"BF16","shape":[2],"data_offsets":[20,24]},"__metadata__":{"format":"pt"}})";
  const SafetensorsFile file(write("ok.safetensors", file_of(header, f32 + f16 + bf16)));
  ASSERT_EQ(file.entries().size(), 3U);
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.read_float32(*file.find("a")), (std::vector<float>{1.5F, -2.0F, 1e-30F}));
  const auto b = file.read_float32(*file.find("b"));
  EXPECT_EQ(file.find("b")->shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(b[0], 1.0F);
  EXPECT_EQ(b[1], std::ldexp(1.0F, -24));
  EXPECT_EQ(b[2], std::numeric_limits<float>::infinity());
  EXPECT_EQ(b[3], -std::ldexp(1.0F, -14));
  EXPECT_EQ(file.read_float32(*file.find("c")), (std::vector<float>{1.0F, -2.5F}));
}

TEST_F(SafetensorsFileTest, RefusesHostileFilesWithOneLineEach) {
  const std::string data = raw(std::vector<float>{1, 2, 3, 4});
  const auto one = [](const std::string& dtype, const std::string& shape, int begin, int end) {
    return R"({"w":{"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":[)" + std::to_string(begin) +
           "," + std::to_string(end) + "]}}";
  };
  const std::string good = file_of(one("F32", "[4]", 0, 16), data);
  EXPECT_NE(refusal(good.substr(0, good.size() - 4)).find("tensor w: data_offsets [0, 16] run past the data's 12"),
            std::string::npos);
  EXPECT_NE(refusal("abc").find("shorter than a safetensors header's length"), std::string::npos);
  EXPECT_NE(refusal(le64(1000) + "{}").find("the header claims 1000 bytes"), std::string::npos);
  EXPECT_NE(refusal(le64(std::uint64_t{1} << 40) + "{}").find("more than safetensors allows"), std::string::npos);
  EXPECT_NE(refusal(file_of(one("I64", "[2]", 0, 16), data)).find("tensor w: dtype I64 is not one hpctrain reads"),
            std::string::npos);
  EXPECT_NE(refusal(file_of(one("F32", "[3]", 0, 16), data))
                .find("tensor w: shape [3] of F32 takes 12 bytes, and data_offsets [0, 16] hold 16"),
            std::string::npos);
  EXPECT_NE(refusal(file_of(one("F32", "[4294967296,4294967296]", 0, 16), data)).find("overflows"), std::string::npos);
  EXPECT_NE(refusal(file_of(one("F32", "[4]", 16, 0), data)).find("end before they begin"), std::string::npos);
  EXPECT_NE(refusal(file_of(one("F32", "[-4]", 0, 16), data)).find("not a non-negative integer"), std::string::npos);
  EXPECT_NE(refusal(file_of(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("v":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                            raw(std::vector<float>{1, 2, 3})))
                .find("its bytes overlap tensor w's"),
            std::string::npos);
  EXPECT_NE(refusal(file_of(one("F32", "[2]", 8, 16), data)).find("bytes 0 to 8 of the data belong to no tensor"),
            std::string::npos);
  EXPECT_NE(refusal(file_of(one("F32", "[2]", 0, 8), data)).find("8 bytes after the last tensor's data"),
            std::string::npos);
  EXPECT_NE(refusal(file_of(std::string(100, '[') + std::string(100, ']'), "")).find("nested deeper than"),
            std::string::npos);
  EXPECT_NE(refusal(file_of("{\"w\":", "")).find("not JSON"), std::string::npos);
  EXPECT_NE(refusal(file_of("[1,2]", "")).find("not a JSON object"), std::string::npos);
  EXPECT_NE(refusal(file_of(R"({"__metadata__":{"a":1}})", "")).find("__metadata__ a is not a string"),
            std::string::npos);
  EXPECT_NE(refusal(file_of(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[0,0],"x":1}})", ""))
                .find("tensor w: unknown field x"),
            std::string::npos);
}

class HfWeightsTest : public SafetensorsFileTest {
 protected:
  std::string shard(const std::string& name) {
    return file_of(R"({")" + name + R"(":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                   raw(std::vector<float>{7}));
  }
  std::string refusal_of_dir() {
    try {
      const HfWeights weights(dir_);
    } catch (const CheckpointError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "accepted";
    return {};
  }
};

TEST_F(HfWeightsTest, ReadsShardsAnIndexLists) {
  write("model-1.safetensors", shard("a"));
  write("model-2.safetensors", shard("b"));
  write("model.safetensors.index.json",
        R"({"metadata":{},"weight_map":{"a":"model-1.safetensors","b":"model-2.safetensors"}})");
  const HfWeights weights(dir_);
  EXPECT_EQ(weights.names(), (std::vector<std::string>{"a", "b"}));
  const auto [file, entry] = weights.find("b");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(file->read_float32(*entry), std::vector<float>{7});
  EXPECT_EQ(weights.find("c").second, nullptr);
}

TEST_F(HfWeightsTest, RefusesIndexesThatPointElsewhereOrDisagree) {
  EXPECT_NE(refusal_of_dir().find("no model.safetensors and no model.safetensors.index.json"), std::string::npos);
  write("model.safetensors.index.json", R"({"weight_map":{"a":"../model-1.safetensors"}})");
  EXPECT_NE(refusal_of_dir().find("weight_map a: ../model-1.safetensors is not a .safetensors file of this directory"),
            std::string::npos);
  write("model-1.safetensors", shard("a"));
  write("model.safetensors.index.json", R"({"weight_map":{"b":"model-1.safetensors"}})");
  EXPECT_NE(refusal_of_dir().find("weight_map puts b in"), std::string::npos);
  write("model-2.safetensors", shard("b"));
  write("model.safetensors.index.json", R"({"weight_map":{"b":"model-2.safetensors","c":"model-1.safetensors"}})");
  EXPECT_NE(refusal_of_dir().find("has no such tensor"), std::string::npos);
  write("model-3.safetensors", file_of(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                       R"("d":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                       raw(std::vector<float>{1, 2})));
  write("model.safetensors.index.json", R"({"weight_map":{"b":"model-2.safetensors","d":"model-3.safetensors"}})");
  EXPECT_NE(refusal_of_dir().find("tensor b is in"), std::string::npos);
  write("model.safetensors.index.json", R"({"weight_map":[]})");
  EXPECT_NE(refusal_of_dir().find("no weight_map object"), std::string::npos);
}

}  // namespace
}  // namespace hpctrain::ckpt_file
