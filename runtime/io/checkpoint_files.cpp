//===- io/checkpoint_files.cpp - Resolve, open and index checkpoint files -===//
//
// Sharded checkpoints: the index's "weight_map" {tensor: shard file} is
// checked against the shards themselves (a tensor the index places in a shard
// that lacks it is an error), and a tensor found in two files is refused
// rather than silently picking one.
//
//===----------------------------------------------------------------------===//
#include "checkpoint_files.h"

#include "bmrt/context.h"
#include "bmrt/json.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bmrt::io {

namespace {

bool isDirectory(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string readTextFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(path + ": cannot open: " + strerror(errno));
  std::string text;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      fail(path + ": cannot read: " + strerror(err));
    }
    if (n == 0)
      break;
    text.append(buf, (size_t)n);
  }
  ::close(fd);
  return text;
}

void addFile(CheckpointFiles &cp, SafetensorsFile file) {
  size_t index = cp.files.size();
  for (size_t k = 0; k < file.tensors().size(); ++k) {
    const std::string &name = file.tensors()[k].name;
    auto [it, inserted] = cp.byName.emplace(name, CheckpointFiles::Location{index, k});
    if (!inserted)
      fail(file.path() + ": tensor '" + name + "' is also in " + cp.files[it->second.file].path() +
           " (which one is meant?)");
  }
  cp.files.push_back(std::move(file));
}

// model.safetensors.index.json: {"metadata": {...}, "weight_map": {name: shard}}
void openShards(CheckpointFiles &cp, const std::string &indexPath) {
  json::Value index = json::parse(readTextFile(indexPath), indexPath);
  const json::Value *weightMap = index.get("weight_map");
  if (!weightMap || weightMap->kind != json::Value::Kind::Object)
    fail(indexPath + ": no \"weight_map\" object (not a safetensors shard index?)");
  size_t slash = indexPath.rfind('/');
  std::string dir = slash == std::string::npos ? "" : indexPath.substr(0, slash + 1);
  std::vector<std::string> shards; // in order of first mention
  for (const auto &[tensor, shard] : weightMap->object) {
    if (shard.kind != json::Value::Kind::String || shard.string.empty())
      fail(indexPath + ": the shard of tensor '" + tensor + "' is not a file name");
    bool known = false;
    for (const std::string &s : shards)
      known = known || s == shard.string;
    if (!known)
      shards.push_back(shard.string);
  }
  if (shards.empty())
    fail(indexPath + ": \"weight_map\" is empty");
  for (const std::string &shard : shards)
    addFile(cp, SafetensorsFile::open(dir + shard));
  for (const auto &[tensor, shard] : weightMap->object) {
    auto it = cp.byName.find(tensor);
    if (it == cp.byName.end() || cp.files[it->second.file].path() != dir + shard.string)
      fail(indexPath + ": \"weight_map\" places tensor '" + tensor + "' in " + shard.string +
           ", but that file does not hold it");
  }
}

} // namespace

const FileTensor *CheckpointFiles::find(const std::string &name,
                                        const SafetensorsFile **file) const {
  auto it = byName.find(name);
  if (it == byName.end())
    return nullptr;
  *file = &files[it->second.file];
  return &files[it->second.file].tensors()[it->second.tensor];
}

std::string CheckpointFiles::describe() const {
  std::string s;
  for (size_t k = 0; k < files.size(); ++k)
    s += (k ? ", " : "") + files[k].path();
  return s;
}

CheckpointFiles openCheckpoint(const std::string &path) {
  CheckpointFiles cp;
  if (!exists(path))
    fail(path + ": checkpoint does not exist");
  if (!isDirectory(path)) {
    if (endsWith(path, ".index.json"))
      openShards(cp, path);
    else
      addFile(cp, SafetensorsFile::open(path));
    return cp;
  }
  std::string dir = endsWith(path, "/") ? path : path + "/";
  if (exists(dir + "model.safetensors")) {
    addFile(cp, SafetensorsFile::open(dir + "model.safetensors"));
  } else if (exists(dir + "model.safetensors.index.json")) {
    openShards(cp, dir + "model.safetensors.index.json");
  } else {
    std::string hint;
    if (exists(dir + "pytorch_model.bin") || exists(dir + "pytorch_model.bin.index.json"))
      hint = " (it has pytorch_model.bin, a pickle, which is not read: re-save it with "
             "save_pretrained(..., safe_serialization=True))";
    fail(path + ": no model.safetensors or model.safetensors.index.json in this directory" +
         hint);
  }
  return cp;
}

} // namespace bmrt::io
