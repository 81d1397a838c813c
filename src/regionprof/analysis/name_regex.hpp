// Name rules' regexes: RE2, compiled once per rule (docs/design.md, rule 11). RE2 matches in time linear
// in the name's length, without recursion and in bounded memory, so a 30 MB name or a pattern such as
// `(a+)+b` cannot overflow the stack or take exponential time. Its syntax is close to Python's `re`;
// backreferences and lookaround are not supported and are rejected when the rule is compiled.
#pragma once

#include <memory>
#include <string>

#include <re2/re2.h>

namespace regionprof::detail {

/// Compiles `pattern` for whole-name matching. Returns nullptr and sets `error` (RE2's reason, e.g.
/// `missing ): layer_(`) when RE2 rejects it.
std::unique_ptr<const re2::RE2> compile_name_regex(const std::string& pattern, std::string& error);

}  // namespace regionprof::detail
