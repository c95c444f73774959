//===- safetensors_test.cpp - Header validation, conversion, atomic writes -===//
//
// Hand-made files for every way a safetensors header can be wrong; each test
// asserts the message names the file and the problem (what a user sees).
// Conversion expectations are IEEE-754 facts (bit patterns of half/bfloat16),
// not outputs of our own code; the Python test covers conversion of whole
// checkpoints against torch.
//
//===----------------------------------------------------------------------===//
#include "safetensors.h"

#include "bmrt/context.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace bmrt::io;

namespace {

class Safetensors : public ::testing::Test {
protected:
  std::string dir;
  void SetUp() override {
    char tmpl[] = "/tmp/bmrt-io-st-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override { (void)system(("rm -rf '" + dir + "'").c_str()); }

  // Writes 8-byte length + header + data to dir/name; returns the path.
  std::string writeFile(const std::string &name, const std::string &header,
                        const std::vector<uint8_t> &data, uint64_t length = ~0ull) {
    std::string path = dir + "/" + name;
    std::ofstream out(path, std::ios::binary);
    uint64_t n = length == ~0ull ? header.size() : length;
    out.write((const char *)&n, 8);
    out << header;
    out.write((const char *)data.data(), (std::streamsize)data.size());
    return path;
  }

  std::string openError(const std::string &path) {
    try {
      SafetensorsFile::open(path);
    } catch (const bmrt::Error &e) {
      return e.what();
    }
    return "(no error)";
  }

  std::vector<std::string> listDir() {
    std::vector<std::string> names;
    DIR *d = opendir(dir.c_str());
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.')
        names.push_back(e->d_name);
    closedir(d);
    return names;
  }
};

#define EXPECT_HAS(message, needle)                                                        \
  EXPECT_NE(std::string(message).find(needle), std::string::npos)                          \
      << "message: " << (message) << "\nlacks: " << (needle)

TEST_F(Safetensors, ValidFileWithMetadata) {
  float values[3] = {1.5f, -2.0f, 3.25f};
  std::vector<uint8_t> data((uint8_t *)values, (uint8_t *)values + 12);
  std::string path = writeFile(
      "ok.safetensors",
      R"({"__metadata__":{"format":"pt"},"x":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
      R"("empty":{"dtype":"F32","shape":[0,4],"data_offsets":[12,12]}}   )",
      data);
  SafetensorsFile file = SafetensorsFile::open(path);
  ASSERT_EQ(file.tensors().size(), 2u);
  const FileTensor &x = file.tensors()[0];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.shape, std::vector<int64_t>{3});
  float out[3];
  file.read(x, bmrt::DType::F32, out, "p");
  EXPECT_EQ(memcmp(out, values, 12), 0);
  double wide[3];
  file.read(x, bmrt::DType::F64, wide, "p");
  EXPECT_EQ(wide[2], 3.25);
}

TEST_F(Safetensors, Truncated) {
  std::string path = dir + "/short.safetensors";
  std::ofstream(path) << "abcde";
  EXPECT_EQ(openError(path), path + ": truncated: 5 bytes (a safetensors file starts with an "
                                    "8-byte header length)");
}

TEST_F(Safetensors, HeaderLengthBeyondFile) {
  std::string path = writeFile("long.safetensors", "{}", {}, 1000);
  EXPECT_EQ(openError(path), path + ": header length 1000 exceeds the file size (10 bytes; "
                                    "truncated, or not a safetensors file)");
}

TEST_F(Safetensors, HeaderImplausiblyLarge) {
  // A sparse file: 200 MiB of header length costs no disk.
  std::string path = writeFile("huge.safetensors", "", {}, 200ull << 20);
  ASSERT_EQ(truncate(path.c_str(), (200ll << 20) + 8), 0);
  EXPECT_HAS(openError(path), "header length 209715200 is implausibly large (> 100 MiB");
}

TEST_F(Safetensors, InvalidJson) {
  std::string path = writeFile("bad.safetensors", R"({"x": {"dtype": "F32",})", {});
  EXPECT_EQ(openError(path), path + " (safetensors header): invalid JSON at byte 22: expected "
                                    "a string key, found '}'");
  path = writeFile("array.safetensors", "[1, 2]", {});
  EXPECT_EQ(openError(path), path + ": the safetensors header is not a JSON object");
}

TEST_F(Safetensors, OffsetsOutOfRange) {
  std::string path = writeFile(
      "range.safetensors", R"({"w":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})",
      std::vector<uint8_t>(16));
  EXPECT_EQ(openError(path), path + ": data_offsets [0, 32] of tensor 'w' lie beyond the data "
                                    "section (16 bytes; is the file truncated?)");
  path = writeFile("reversed.safetensors",
                   R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})",
                   std::vector<uint8_t>(16));
  EXPECT_EQ(openError(path), path + ": data_offsets [8, 4] of tensor 'w' end before they begin");
}

TEST_F(Safetensors, Overlapping) {
  std::string path = writeFile("overlap.safetensors",
                               R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                               R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})",
                               std::vector<uint8_t>(24));
  EXPECT_EQ(openError(path), path + ": the data of tensors 'a' and 'b' overlap");
}

TEST_F(Safetensors, SizeDisagreesWithShape) {
  std::string path = writeFile(
      "size.safetensors", R"({"w":{"dtype":"BF16","shape":[3],"data_offsets":[0,8]}})",
      std::vector<uint8_t>(8));
  EXPECT_EQ(openError(path), path + ": tensor 'w' has 8 bytes of data, but dtype BF16 and "
                                    "shape [3] need 6");
}

TEST_F(Safetensors, BadEntries) {
  auto one = [&](const std::string &entry) {
    return openError(writeFile("e.safetensors", "{\"w\":" + entry + "}", std::vector<uint8_t>(8)));
  };
  EXPECT_HAS(one(R"({"dtype":"U8","shape":[8],"data_offsets":[0,8]})"),
             "tensor 'w' has dtype U8, which is not supported (F32, F16, BF16, F64, I32, I64)");
  EXPECT_HAS(one(R"({"shape":[2],"data_offsets":[0,8]})"), "tensor 'w' has no \"dtype\" string");
  EXPECT_HAS(one(R"({"dtype":"F32","data_offsets":[0,8]})"), "tensor 'w' has no \"shape\" array");
  EXPECT_HAS(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0]})"),
             "tensor 'w' has no \"data_offsets\" [begin, end] array");
  EXPECT_HAS(one(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})"),
             "a dimension in the shape of tensor 'w' is not a non-negative integer");
  EXPECT_HAS(one(R"({"dtype":"F32","shape":[2.5],"data_offsets":[0,8]})"),
             "a dimension in the shape of tensor 'w' is not a non-negative integer");
  EXPECT_HAS(one(R"({"dtype":"F32","shape":[2],"data_offsets":["0",8]})"),
             "data_offsets[0] of tensor 'w' is not a non-negative integer");
  EXPECT_HAS(one(R"({"dtype":"F32","shape":[4294967296,4294967296,4294967296],)"
                 R"("data_offsets":[0,8]})"),
             "the shape of tensor 'w' has too many elements");
  EXPECT_HAS(one("7"), "header entry of tensor 'w' is not an object");
  std::string path = writeFile("dup.safetensors",
                               R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                               R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                               std::vector<uint8_t>(8));
  EXPECT_EQ(openError(path), path + ": tensor 'w' appears twice in the header");
  path = writeFile("meta.safetensors", R"({"__metadata__":[]})", {});
  EXPECT_EQ(openError(path), path + ": \"__metadata__\" is not an object");
}

TEST_F(Safetensors, MissingFile) {
  EXPECT_HAS(openError(dir + "/nope.safetensors"), "nope.safetensors: cannot open: No such file");
  EXPECT_EQ(openError(dir), dir + ": not a regular file");
}

TEST_F(Safetensors, HalfAndBFloat16ToF32) {
  // IEEE half: 1.0, -2.0, 65504 (max), 2^-24 (smallest subnormal), 2^-14
  // (smallest normal), -0, +inf, 0.333251953125 (0x3555); bfloat16 = top half
  // of a float: 1.0, -3.0, 2^-133 (subnormal).
  uint16_t half[8] = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x0400, 0x8000, 0x7C00, 0x3555};
  uint16_t bf16[3] = {0x3F80, 0xC040, 0x0001};
  std::vector<uint8_t> data((uint8_t *)half, (uint8_t *)half + 16);
  data.insert(data.end(), (uint8_t *)bf16, (uint8_t *)bf16 + 6);
  std::string path = writeFile("h.safetensors",
                               R"({"h":{"dtype":"F16","shape":[8],"data_offsets":[0,16]},)"
                               R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]}})",
                               data);
  SafetensorsFile file = SafetensorsFile::open(path);
  float h[8], b[3];
  file.read(file.tensors()[0], bmrt::DType::F32, h, "p");
  file.read(file.tensors()[1], bmrt::DType::F32, b, "p");
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], -2.0f);
  EXPECT_EQ(h[2], 65504.0f);
  EXPECT_EQ(h[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(h[4], std::ldexp(1.0f, -14));
  EXPECT_EQ(h[5], 0.0f);
  EXPECT_TRUE(std::signbit(h[5]));
  EXPECT_TRUE(std::isinf(h[6]) && h[6] > 0);
  EXPECT_EQ(h[7], 0.333251953125f);
  EXPECT_EQ(b[0], 1.0f);
  EXPECT_EQ(b[1], -3.0f);
  EXPECT_EQ(b[2], std::ldexp(1.0f, -133));
}

TEST_F(Safetensors, IntegersAndDirectionErrors) {
  int64_t wide[3] = {7, -9, (int64_t)1 << 40};
  std::vector<uint8_t> data((uint8_t *)wide, (uint8_t *)wide + 24);
  std::string path = writeFile(
      "i.safetensors",
      R"({"ok":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
      R"("big":{"dtype":"I64","shape":[1],"data_offsets":[16,24]}})",
      data);
  SafetensorsFile file = SafetensorsFile::open(path);
  int32_t out[2];
  file.read(file.tensors()[0], bmrt::DType::I32, out, "ids");
  EXPECT_EQ(out[0], 7);
  EXPECT_EQ(out[1], -9);
  try {
    file.read(file.tensors()[1], bmrt::DType::I32, out, "ids");
    ADD_FAILURE() << "an I64 beyond I32 was accepted";
  } catch (const bmrt::Error &e) {
    EXPECT_HAS(e.what(), "tensor 'big' element 0 (1099511627776) does not fit the I32 of ids");
  }
  float f[2];
  try {
    file.read(file.tensors()[0], bmrt::DType::F32, f, "h.ln1.w, layer 0");
    ADD_FAILURE() << "an integer tensor was read into a float param";
  } catch (const bmrt::Error &e) {
    EXPECT_HAS(e.what(), "tensor 'ok' has dtype I64, but h.ln1.w, layer 0 is F32");
  }
}

TEST_F(Safetensors, WriterPadsAndReadsBack) {
  float a[3] = {1, 2, 3};
  std::vector<OutTensor> out = {
      {"a", bmrt::DType::F32, {3}, [&](std::vector<uint8_t> &) { return (const void *)a; }},
      {"quote\"name", bmrt::DType::F32, {1, 1}, [&](std::vector<uint8_t> &s) {
         s.assign(4, 0);
         float v = -4;
         memcpy(s.data(), &v, 4);
         return (const void *)s.data();
       }}};
  std::string path = dir + "/w.safetensors";
  writeSafetensors(path, out);
  std::ifstream in(path, std::ios::binary);
  uint64_t headerBytes = 0;
  in.read((char *)&headerBytes, 8);
  EXPECT_EQ(headerBytes % 8, 0u);
  SafetensorsFile file = SafetensorsFile::open(path);
  ASSERT_EQ(file.tensors().size(), 2u);
  EXPECT_EQ(file.tensors()[1].name, "quote\"name");
  float back[3], q;
  file.read(file.tensors()[0], bmrt::DType::F32, back, "p");
  file.read(file.tensors()[1], bmrt::DType::F32, &q, "p");
  EXPECT_EQ(memcmp(back, a, 12), 0);
  EXPECT_EQ(q, -4.0f);
  EXPECT_EQ(listDir(), std::vector<std::string>{"w.safetensors"});
}

TEST_F(Safetensors, FailedWriteLeavesOldFileAndNoTemp) {
  std::string path = dir + "/keep.safetensors";
  std::ofstream(path) << "old contents";
  float a[1] = {1};
  std::vector<OutTensor> out = {
      {"a", bmrt::DType::F32, {1}, [&](std::vector<uint8_t> &) { return (const void *)a; }},
      {"b", bmrt::DType::F32, {1}, [&](std::vector<uint8_t> &) -> const void * {
         bmrt::fail("cannot build b");
       }}};
  try {
    writeSafetensors(path, out);
    ADD_FAILURE() << "the write did not fail";
  } catch (const bmrt::Error &e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot write: tensor 'b': cannot build b");
  }
  std::ifstream in(path);
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(contents, "old contents");
  EXPECT_EQ(listDir(), std::vector<std::string>{"keep.safetensors"});
  try {
    writeSafetensors(dir + "/no/such/dir/x.safetensors", out);
    ADD_FAILURE() << "the write did not fail";
  } catch (const bmrt::Error &e) {
    EXPECT_HAS(e.what(), "no/such/dir/x.safetensors: cannot write: cannot create");
  }
}

} // namespace
