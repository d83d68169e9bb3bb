// SPDX-License-Identifier: Apache-2.0
// The rule table (generated from abi/rules.toml by tools/gen_rules.py), the
// known releases and what each exports, and rendering a rule's formats.
#ifndef TFPLUGIN_VALIDATE_RULES_H_
#define TFPLUGIN_VALIDATE_RULES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "validate_rule_ids.h"

namespace tfp_validator {

enum class Severity : int { kError = 0, kWarning = 1, kInfo = 2 };

struct RuleRow {
  const char* id;
  Phase phase;
  Severity severity;
  const char* summary;
  const char* checks;
  const char* subject;   // formats: {name} is a finding's field
  const char* message;
  const char* expected;
  const char* actual;
  const char* fix;
};

struct ExportRow {
  const char* name;
  uint64_t releases;  // bit i: Release(i) exports it
};

const RuleRow& GetRule(RuleId id);
const RuleRow& GetRule(int index);  // 0 <= index < kRuleCount
// The rule with this id ("TFP-FILE-EMPTY"), or nullptr.
const RuleRow* FindRule(const char* id);
int RuleIndex(RuleId id);
const char* PhaseName(Phase phase);
const char* SeverityName(Severity severity);

// Releases, oldest first; the last is the default target.
int ReleaseCount();
const char* Release(int index);
// Its ABI revisions: "SE3 K2 G3 P1".
const char* ReleaseRevisions(int index);
// Index of "2.16", or -1.
int ReleaseIndex(const char* release);
// Bit i set: Release(i) exports `symbol` (0: no release does).
uint64_t ExportMask(const char* symbol);
// "2.5-2.7, 2.9" for a mask of releases ("" for 0).
std::string ReleaseRanges(uint64_t mask);

using Fields = std::vector<std::pair<std::string, std::string>>;
// `format` with every {name} replaced by the field's value; a placeholder
// with no such field is kept as is (tests look for leftovers).
std::string Render(const char* format, const Fields& fields);

}  // namespace tfp_validator

#endif  // TFPLUGIN_VALIDATE_RULES_H_
