//===- bmrt/prompt.h - Prompt templates and verbalizers -> token ids ------===//
//
// The input assembly of prompt tuning (OpenPrompt's template + verbalizer).
// The compiler's bmb-lower-prompts pass writes a tune job's plan (the
// `bmb.prompt` attribute); the emitted program carries it as a
// PromptTemplate and a PromptVerbalizer, and calls these functions per
// example. docs/tuning.md describes the rules; in short:
//
//   * each segment is tokenized on its own, without special tokens; a
//     placeholder that owns the space before it gets " " + its text, so
//     byte-level BPE sees " good" as GPT-2/RoBERTa do;
//   * the model family's framing ([CLS] ... [SEP], <s> ... </s>, none) is
//     added around the whole, as the tokenizer adds it to one text;
//   * {mask} is the tokenizer's mask token ([MASK] or <mask>), and its
//     position is where the label words are scored; a tokenizer without one
//     is a causal LM's (GPT-2): the mask adds no token and its position is
//     the token before it, whose next-token logits score the label words;
//   * a soft token is id 0 at a position the program overwrites with its
//     embedding row;
//   * when the result exceeds max_len, tokens are removed from shortenable
//     segments only: tail (from the end of the last one backwards), head
//     (from the start of the first one onwards) or balanced (one token at a
//     time from the end of the currently longest; ties: the later one).
//
// Errors (bmrt::fail) name the example (file:line), the field or the label
// word at fault.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_PROMPT_H
#define BMRT_PROMPT_H

#include "bmrt/tokenizer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bmrt {

struct PromptSegment {
  enum class Kind { Text, Field, Meta, Mask, Soft };
  Kind kind = Kind::Text;
  std::string text;         // Text: literal; Field/Meta: the field's name; Soft: init word
  bool space = false;       // owns the space before it
  bool shortenable = false; // Field/Meta: may lose tokens when too long
};

enum class Truncate { Head, Tail, Balanced };

struct PromptTemplate {
  std::vector<PromptSegment> segments;
  Truncate truncate = Truncate::Tail;
  int64_t maxLen = 0; // tokens, framing included
};

struct PromptVerbalizer {
  std::vector<std::string> labels;
  std::vector<std::vector<std::string>> words; // per label
};

/// One example's fields by name (text_a, text_b, meta fields); `where`
/// ("data.jsonl:12") prefixes its errors.
struct PromptExample {
  std::vector<std::pair<std::string, std::string>> fields;
  std::string where;
};

struct AssembledPrompt {
  std::vector<int32_t> ids;
  std::vector<int64_t> maskPositions;                 // whose logits score the mask, in order
  std::vector<std::pair<int64_t, int64_t>> softSlots; // (position, soft token index)
  int64_t truncated = 0;                              // tokens removed
};

/// The token ids of one example under the template.
AssembledPrompt assemblePrompt(const PromptTemplate &t, const PromptExample &example,
                               const Tokenizer &tok);

/// The content-free input of calibration: every field of the template empty.
PromptExample contentFreeExample(const PromptTemplate &t);

/// The token ids of each label word, [label][word][token], tokenized as the
/// template's mask number `mask` (0-based) sees them: with a leading space
/// if that mask owns one. `v` is that mask's verbalizer. A word the
/// tokenizer cannot spell with known tokens ([UNK] or a special token)
/// fails, naming the word and its label.
std::vector<std::vector<std::vector<int32_t>>>
labelWordIds(const PromptVerbalizer &v, const PromptTemplate &t, const Tokenizer &tok,
             size_t mask = 0);

/// The token ids each soft token is initialised from (empty: random), in
/// soft-token order; the embedding row starts as their mean.
std::vector<std::vector<int32_t>> softInitIds(const PromptTemplate &t, const Tokenizer &tok);

/// What one segment (or a label or init word) is encoded from: `text`, less
/// one leading space when the tokenizer starts every text it encodes as a
/// new word anyway (SentencePiece's "▁": Llama). A Llama file converted in
/// the legacy way prepends "▁" unconditionally, so " good" alone would be
/// "▁", "▁good", every label word's first token the same "▁"; the space
/// the segment owns is the "▁" the tokenizer adds. (WordPiece also starts
/// texts as words; a leading space never changed its tokens.)
std::string segmentText(const Tokenizer &tok, const std::string &text);

namespace json {
struct Value;
}

/// A prompt plan in the JSON shape of the `bmb.prompt` attribute
/// (docs/tuning.md: segments, truncate, max_len, labels, verbalizers with
/// their words, one per mask, or one top-level "words"). Fails naming
/// `where` on a missing or mistyped field.
void readPromptPlan(const json::Value &plan, const std::string &where, PromptTemplate &t,
                    std::vector<PromptVerbalizer> &verbalizers);

/// The tokenizer's mask token ([MASK] or <mask>); none for a causal LM's.
std::optional<int32_t> maskTokenId(const Tokenizer &tok);

} // namespace bmrt

#endif // BMRT_PROMPT_H
