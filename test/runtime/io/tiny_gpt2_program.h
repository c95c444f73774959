//===- tiny_gpt2_program.h - A hand-written GPT-2 param table and "hf" map -===//
//
// Mirrors what bmbc emits for a GPT-2 (our names, stacked per-layer params,
// the `checkpoint hf for GPT` name map) so the checkpoint code is tested
// before the compiler emits programs. The "hf" rules are written from
// Hugging Face's GPT-2: Conv1D weights are [in, out], i.e. transposed
// relative to our Linear-style [out, in]; c_attn is q, k, v concatenated on
// the output dim; lm_head is tied to wte. The Python test checks the result
// against transformers' own state_dict and logits, so a wrong rule here
// fails there.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TEST_TINY_GPT2_PROGRAM_H
#define BMRT_TEST_TINY_GPT2_PROGRAM_H

#include "bmrt/program.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

namespace tiny_gpt2 {

inline const char *const kWte[] = {"wte.w"};
inline const char *const kWpe[] = {"wpe.w"};
inline const char *const kLn1W[] = {"h.ln1.w"};
inline const char *const kLn1B[] = {"h.ln1.b"};
inline const char *const kQkvW[] = {"h.attn.q.w", "h.attn.k.w", "h.attn.v.w"};
inline const char *const kQkvB[] = {"h.attn.q.b", "h.attn.k.b", "h.attn.v.b"};
inline const char *const kOW[] = {"h.attn.o.w"};
inline const char *const kOB[] = {"h.attn.o.b"};
inline const char *const kLn2W[] = {"h.ln2.w"};
inline const char *const kLn2B[] = {"h.ln2.b"};
inline const char *const kUpW[] = {"h.mlp.up.w"};
inline const char *const kUpB[] = {"h.mlp.up.b"};
inline const char *const kDownW[] = {"h.mlp.down.w"};
inline const char *const kDownB[] = {"h.mlp.down.b"};
inline const char *const kLnFW[] = {"ln_f.w"};
inline const char *const kLnFB[] = {"ln_f.b"};

// external, parts, numParts, axis, transpose, tied
inline const bmrt::NameRule kHfRules[] = {
    {"transformer.wte.weight", kWte, 1, 0, false, false},
    {"transformer.wpe.weight", kWpe, 1, 0, false, false},
    {"transformer.h.{i}.ln_1.weight", kLn1W, 1, 0, false, false},
    {"transformer.h.{i}.ln_1.bias", kLn1B, 1, 0, false, false},
    {"transformer.h.{i}.attn.c_attn.weight", kQkvW, 3, 0, true, false},
    {"transformer.h.{i}.attn.c_attn.bias", kQkvB, 3, 0, false, false},
    {"transformer.h.{i}.attn.c_proj.weight", kOW, 1, 0, true, false},
    {"transformer.h.{i}.attn.c_proj.bias", kOB, 1, 0, false, false},
    {"transformer.h.{i}.ln_2.weight", kLn2W, 1, 0, false, false},
    {"transformer.h.{i}.ln_2.bias", kLn2B, 1, 0, false, false},
    {"transformer.h.{i}.mlp.c_fc.weight", kUpW, 1, 0, true, false},
    {"transformer.h.{i}.mlp.c_fc.bias", kUpB, 1, 0, false, false},
    {"transformer.h.{i}.mlp.c_proj.weight", kDownW, 1, 0, true, false},
    {"transformer.h.{i}.mlp.c_proj.bias", kDownB, 1, 0, false, false},
    {"transformer.ln_f.weight", kLnFW, 1, 0, false, false},
    {"transformer.ln_f.bias", kLnFB, 1, 0, false, false},
    {"lm_head.weight", kWte, 1, 0, false, true},
};

/// The tables of one size; `info` points into the other members (not movable).
struct Program {
  std::vector<bmrt::ParamInfo> params;
  bmrt::NameMap hfMap{"hf", kHfRules, (int)(sizeof kHfRules / sizeof kHfRules[0])};
  bmrt::ProgramInfo info{};
  Program() = default;
  Program(const Program &) = delete;
};

/// L layers, C channels, V vocab, P positions; params packed in table order,
/// each 64-byte aligned as the compiler's memory plan would.
inline std::unique_ptr<Program> make(int64_t L, int64_t C, int64_t V, int64_t P) {
  auto program = std::make_unique<Program>();
  int64_t offset = 0;
  auto add = [&](const char *name, bool stacked, std::initializer_list<int64_t> shape) {
    bmrt::ParamInfo p{};
    p.name = name;
    p.dtype = bmrt::DType::F32;
    p.rank = (int)shape.size();
    int64_t numel = 1, d = 0;
    for (int64_t dim : shape) {
      p.shape[d++] = dim;
      numel *= dim;
    }
    p.offset = offset;
    p.stacked = stacked;
    offset += (numel * 4 + 63) / 64 * 64;
    program->params.push_back(p);
  };
  add("wte.w", false, {V, C});
  add("wpe.w", false, {P, C});
  add("h.ln1.w", true, {L, C});
  add("h.ln1.b", true, {L, C});
  add("h.attn.q.w", true, {L, C, C});
  add("h.attn.k.w", true, {L, C, C});
  add("h.attn.v.w", true, {L, C, C});
  add("h.attn.q.b", true, {L, C});
  add("h.attn.k.b", true, {L, C});
  add("h.attn.v.b", true, {L, C});
  add("h.attn.o.w", true, {L, C, C});
  add("h.attn.o.b", true, {L, C});
  add("h.ln2.w", true, {L, C});
  add("h.ln2.b", true, {L, C});
  add("h.mlp.up.w", true, {L, 4 * C, C});
  add("h.mlp.up.b", true, {L, 4 * C});
  add("h.mlp.down.w", true, {L, C, 4 * C});
  add("h.mlp.down.b", true, {L, C});
  add("ln_f.w", false, {C});
  add("ln_f.b", false, {C});

  bmrt::ProgramInfo &info = program->info;
  info.source = "tiny_gpt2_program.h";
  info.job = "test";
  info.model = "GPT";
  info.from = "";
  info.kind = bmrt::ModelKind::CausalLM;
  info.vocab = V;
  info.ctx = P;
  info.params = program->params.data();
  info.numParams = (int)program->params.size();
  info.nameMaps = &program->hfMap;
  info.numNameMaps = 1;
  info.paramBytes = offset;
  info.sampling = "greedy";
  info.tokenizer = "";
  return program;
}

} // namespace tiny_gpt2

#endif // BMRT_TEST_TINY_GPT2_PROGRAM_H
