//===- SemaSettings.h - Checking settings against a schema -----*- C++ -*-===//
//
// Job settings, configuration calls (`adamw(lr = 1e-3)`) and recipe options
// are constants checked against a small schema: what kind of value each key
// takes. Shared by SemaJob.cpp and SemaDecls.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_LANG_SEMASETTINGS_H
#define BMB_LANG_SEMASETTINGS_H

#include "lang/SemaInternal.h"

#include <string>
#include <vector>

namespace bmb::sema {

enum class VT {
  PosInt,    // an integer > 0
  NonNegInt, // an integer >= 0
  Int,       // any integer
  PosFloat,  // a number > 0
  UnitFloat, // a number in [0, 1]
  Float,     // any number
  Bool,
  String,
  Word,      // one of `words`
  Config,    // a call of one of `calls` (or a bare word among `words`)
  Names,     // a string/name or a list of them (layer paths, patterns)
  Size,      // bytes: an integer, or a string such as "6GiB"
  Zero,      // 0, 1, 2, 3 or auto
  Prompt,    // template -> verbalizer
  Pairs,     // a list of "a" : "b" pairs
  Configs,   // one Config or a list of them (`delta = [lora(8), bitfit]`)
};

struct ValueSpec {
  const char *key;
  VT type;
  std::vector<std::string> words; // Word, Config (bare words)
  bool required = false;
};

/// The arguments of a configuration call, positional in this order.
struct CallSpec {
  const char *name;
  std::vector<ValueSpec> args; // `required` marks required arguments
};

/// Checks `c` against `spec`, normalizing it (ints to floats for real-valued
/// keys, configuration calls to keyword form, sizes to bytes, `a -> b`
/// prompts to a call). Reports at `loc` and returns false on a mismatch.
bool checkValue(Sema &sema, const ValueSpec &spec, Constant &c, Loc loc,
                const std::string &what);

std::string joinWords(const std::vector<std::string> &words);

} // namespace bmb::sema

#endif // BMB_LANG_SEMASETTINGS_H
