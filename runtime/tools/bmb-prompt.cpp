//===- tools/bmb-prompt.cpp - Prompt input assembly from the command line -===//
//
//   bmb-prompt --tokenizer PATH|byte [--hint gpt2|bert|llama] PLAN.json EXAMPLES.jsonl
//
// PLAN.json is a tune job's prompt plan, in the shape of the `bmb.prompt`
// attribute bmb-lower-prompts writes (docs/tuning.md):
//   {"segments": [{"kind": "field", "name": "text_a", "space": false, "shortenable": true},
//                 {"kind": "text", "text": " It was"}, {"kind": "mask", "space": true}, ...],
//    "truncate": "tail", "max_len": 32, "labels": [...],
//    "verbalizers": [{"words": [[...], ...]}, ...]}   (one per mask; or "words": [...])
// EXAMPLES.jsonl holds one JSON object of string fields per line. Writes one
// JSON object to stdout: the label words' ids per mask ("label_words":
// [mask][label][word][token]), the soft tokens' init ids,
// the content-free input and each example's ids, mask positions, soft slots
// and truncated count. Exit status: 0 done, 1 a run-time error (the message
// names the file and line), 2 bad usage.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/json.h"
#include "bmrt/prompt.h"
#include "bmrt/tokenizer.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char *kUsage =
    "usage: bmb-prompt --tokenizer PATH|byte [--hint gpt2|bert|llama] PLAN.json EXAMPLES.jsonl\n"
    "\n"
    "Assembles prompt-tuning inputs: token ids, mask positions and soft-token\n"
    "slots of each example, and the verbalizer's label-word ids, as JSON.\n";

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    bmrt::fail(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void readPlan(const std::string &path, bmrt::PromptTemplate &t,
              std::vector<bmrt::PromptVerbalizer> &verbalizers) {
  bmrt::readPromptPlan(bmrt::json::parse(readFile(path), path), path, t, verbalizers);
}

template <typename T> std::string list(const std::vector<T> &xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i)
    s += (i ? "," : "") + std::to_string(xs[i]);
  return s + "]";
}

std::string assembled(const bmrt::AssembledPrompt &a) {
  std::string soft = "[";
  for (size_t i = 0; i < a.softSlots.size(); ++i)
    soft += (i ? ",[" : "[") + std::to_string(a.softSlots[i].first) + "," +
            std::to_string(a.softSlots[i].second) + "]";
  return "{\"ids\":" + list(a.ids) + ",\"mask\":" + list(a.maskPositions) + ",\"soft\":" + soft +
         "],\"truncated\":" + std::to_string(a.truncated) + "}";
}

int run(const std::string &tokPath, const std::string &hint, const std::string &planPath,
        const std::string &examplesPath) {
  std::unique_ptr<bmrt::Tokenizer> tok =
      tokPath == "byte" ? bmrt::makeByteTokenizer(false) : bmrt::loadTokenizer(tokPath, hint);
  bmrt::PromptTemplate t;
  std::vector<bmrt::PromptVerbalizer> verbalizers;
  readPlan(planPath, t, verbalizers);

  // [mask][label][word][token]
  std::string out = "{\"label_words\":[";
  for (size_t m = 0; m < verbalizers.size(); ++m) {
    auto words = bmrt::labelWordIds(verbalizers[m], t, *tok, m);
    out += m ? ",[" : "[";
    for (size_t l = 0; l < words.size(); ++l) {
      out += l ? ",[" : "[";
      for (size_t w = 0; w < words[l].size(); ++w)
        out += (w ? "," : "") + list(words[l][w]);
      out += "]";
    }
    out += "]";
  }
  out += "],\"soft_init\":[";
  auto init = bmrt::softInitIds(t, *tok);
  for (size_t i = 0; i < init.size(); ++i)
    out += (i ? "," : "") + list(init[i]);
  out += "],\"content_free\":" +
         assembled(bmrt::assemblePrompt(t, bmrt::contentFreeExample(t), *tok)) +
         ",\"examples\":[";

  std::istringstream lines(readFile(examplesPath));
  std::string line;
  int64_t lineNo = 0, n = 0;
  while (std::getline(lines, line)) {
    ++lineNo;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    std::string where = examplesPath + ":" + std::to_string(lineNo);
    bmrt::json::Value obj = bmrt::json::parse(line, where);
    if (obj.kind != bmrt::json::Value::Kind::Object)
      bmrt::fail(where + ": an example is a JSON object of string fields");
    bmrt::PromptExample e;
    e.where = where;
    for (const auto &[k, val] : obj.object) {
      if (val.kind != bmrt::json::Value::Kind::String)
        bmrt::fail(where + ": field '" + k + "' is not a string");
      e.fields.emplace_back(k, val.string);
    }
    out += (n++ ? "," : "") + assembled(bmrt::assemblePrompt(t, e, *tok));
  }
  out += "]}\n";
  std::fputs(out.c_str(), stdout);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string tok, hint;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if ((a == "--tokenizer" || a == "--hint") && i + 1 < argc)
      (a == "--tokenizer" ? tok : hint) = argv[++i];
    else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "bmb-prompt: unknown flag or missing value: %s\n%s", a.c_str(), kUsage);
      return 2;
    } else
      files.push_back(a);
  }
  if (tok.empty() || files.size() != 2) {
    std::fprintf(stderr, "bmb-prompt: give --tokenizer, a plan and an examples file\n%s", kUsage);
    return 2;
  }
  try {
    return run(tok, hint, files[0], files[1]);
  } catch (const bmrt::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
