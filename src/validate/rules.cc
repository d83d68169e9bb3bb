// SPDX-License-Identifier: Apache-2.0
#include "rules.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace tfp_validator {
namespace {

#include "validate_rule_table.inc"

static_assert(std::size(kRuleRows) == static_cast<size_t>(kRuleCount),
              "validate_rule_ids.h and validate_rule_table.inc disagree");
static_assert(std::size(kPhaseNames) == static_cast<size_t>(kPhaseCount),
              "validate_rule_ids.h and validate_rule_table.inc disagree");
static_assert(std::size(kReleaseNames) <= 64, "the export masks hold 64 releases");

}  // namespace

const RuleRow& GetRule(RuleId id) { return kRuleRows[static_cast<int>(id)]; }
const RuleRow& GetRule(int index) { return kRuleRows[index]; }
int RuleIndex(RuleId id) { return static_cast<int>(id); }

const RuleRow* FindRule(const char* id) {
  if (id == nullptr) return nullptr;
  for (const RuleRow& row : kRuleRows) {
    if (std::strcmp(row.id, id) == 0) return &row;
  }
  return nullptr;
}

const char* PhaseName(Phase phase) { return kPhaseNames[static_cast<int>(phase)]; }

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kInfo: return "info";
  }
  return "error";
}

int ReleaseCount() { return static_cast<int>(std::size(kReleaseNames)); }
const char* Release(int index) { return kReleaseNames[index]; }
const char* ReleaseRevisions(int index) { return kReleaseRevisions[index]; }

int ReleaseIndex(const char* release) {
  if (release == nullptr) return -1;
  for (int i = 0; i < ReleaseCount(); ++i) {
    if (std::strcmp(kReleaseNames[i], release) == 0) return i;
  }
  return -1;
}

uint64_t ExportMask(const char* symbol) {
  const ExportRow* begin = std::begin(kExportRows);
  const ExportRow* end = std::end(kExportRows);
  const ExportRow* it = std::lower_bound(begin, end, symbol, [](const ExportRow& row, const char* s) {
    return std::strcmp(row.name, s) < 0;
  });
  return it != end && std::strcmp(it->name, symbol) == 0 ? it->releases : 0;
}

std::string ReleaseRanges(uint64_t mask) {
  std::string out;
  const int n = ReleaseCount();
  for (int i = 0; i < n; ++i) {
    if (!(mask >> i & 1)) continue;
    int j = i;
    while (j + 1 < n && (mask >> (j + 1) & 1)) ++j;
    if (!out.empty()) out += ", ";
    out += kReleaseNames[i];
    if (j > i) {
      out += '-';
      out += kReleaseNames[j];
    }
    i = j;
  }
  return out;
}

std::string Render(const char* format, const Fields& fields) {
  std::string out;
  for (const char* p = format; *p != '\0';) {
    if (*p == '{') {
      const char* close = std::strchr(p + 1, '}');
      if (close != nullptr) {
        std::string name(p + 1, close);
        auto it = std::find_if(fields.begin(), fields.end(),
                               [&](const auto& f) { return f.first == name; });
        if (it != fields.end()) {
          out += it->second;
          p = close + 1;
          continue;
        }
      }
    }
    out += *p++;
  }
  return out;
}

}  // namespace tfp_validator
