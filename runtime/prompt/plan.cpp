//===- prompt/plan.cpp - A prompt plan (JSON) as template and verbalizers -===//
//
// The JSON shape of bmb-lower-prompts' `bmb.prompt` attribute, which the
// tune program carries as TuneInfo::prompt and bmb-prompt reads from a file.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/json.h"
#include "bmrt/prompt.h"

namespace bmrt {

namespace {

const bmrt::json::Value &need(const bmrt::json::Value &v, const char *key,
                              bmrt::json::Value::Kind kind, const std::string &where) {
  const bmrt::json::Value *m = v.get(key);
  if (!m || m->kind != kind)
    bmrt::fail(where + ": missing or mistyped field '" + key + "'");
  return *m;
}

bool flag(const bmrt::json::Value &v, const char *key) {
  const bmrt::json::Value *m = v.get(key);
  return m && m->kind == bmrt::json::Value::Kind::Bool && m->boolean;
}

} // namespace

void readPromptPlan(const json::Value &plan, const std::string &path, PromptTemplate &t,
                    std::vector<PromptVerbalizer> &verbalizers) {
  using Kind = bmrt::json::Value::Kind;
  using SK = bmrt::PromptSegment::Kind;
  for (const bmrt::json::Value &s : need(plan, "segments", Kind::Array, path).array) {
    bmrt::PromptSegment seg;
    const std::string &kind = need(s, "kind", Kind::String, path + ": segment").string;
    if (kind == "text") {
      seg.kind = SK::Text;
      seg.text = need(s, "text", Kind::String, path + ": text segment").string;
    } else if (kind == "field" || kind == "meta") {
      seg.kind = kind == "field" ? SK::Field : SK::Meta;
      seg.text = need(s, "name", Kind::String, path + ": " + kind + " segment").string;
    } else if (kind == "mask") {
      seg.kind = SK::Mask;
    } else if (kind == "soft") {
      seg.kind = SK::Soft;
      if (const bmrt::json::Value *w = s.get("init"))
        seg.text = w->string;
    } else {
      bmrt::fail(path + ": unknown segment kind '" + kind +
                 "' (expected text, field, meta, mask or soft)");
    }
    seg.space = flag(s, "space");
    seg.shortenable = flag(s, "shortenable");
    t.segments.push_back(std::move(seg));
  }
  if (const bmrt::json::Value *tr = plan.get("truncate")) {
    if (tr->string == "head")
      t.truncate = bmrt::Truncate::Head;
    else if (tr->string == "tail")
      t.truncate = bmrt::Truncate::Tail;
    else if (tr->string == "balanced")
      t.truncate = bmrt::Truncate::Balanced;
    else
      bmrt::fail(path + ": truncate is head, tail or balanced, got '" + tr->string + "'");
  }
  if (const bmrt::json::Value *m = plan.get("max_len"))
    t.maxLen = static_cast<int64_t>(m->number);
  // "verbalizers": [{"words": [[...], ...]}, ...], one per mask (or one
  // verbalizer as top-level "words"); "labels" are shared.
  const bmrt::json::Value *labels = plan.get("labels");
  if (!labels)
    return;
  std::vector<const bmrt::json::Value *> wordLists;
  if (const bmrt::json::Value *vs = plan.get("verbalizers"))
    for (const bmrt::json::Value &v : vs->array)
      wordLists.push_back(&need(v, "words", Kind::Array, path + ": verbalizer"));
  else
    wordLists.push_back(&need(plan, "words", Kind::Array, path));
  for (const bmrt::json::Value *words : wordLists) {
    bmrt::PromptVerbalizer v;
    for (size_t i = 0; i < labels->array.size(); ++i) {
      v.labels.push_back(labels->array[i].string);
      v.words.emplace_back();
      if (i < words->array.size())
        for (const bmrt::json::Value &w : words->array[i].array)
          v.words.back().push_back(w.string);
    }
    verbalizers.push_back(std::move(v));
  }
}


} // namespace bmrt
