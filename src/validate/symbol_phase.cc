// SPDX-License-Identifier: Apache-2.0
// Phase 2, the symbols: from the dynamic symbol table, without loading the
// plugin. Entry points: is one exported the way TensorFlow's dlsym() finds
// it, and if not, why (mangled, misspelled, hidden, not a function)?
// Imports: does the targeted release export every TF_* ... symbol the
// plugin needs (RTLD_NOW fails the load otherwise), and does the plugin
// bind to TensorFlow's C++ internals?
#include <elf.h>

#include <map>
#include <set>
#include <string>

#include "elf_file.h"
#include "phases.h"
#include "symbol_names.h"

namespace tfp_validator {
namespace {

const char* const kImportPrefixes[] = {"TF_", "SE_", "TP_", "TSL_", "TFNPD_"};

bool HasImportPrefix(const std::string& name) {
  for (const char* p : kImportPrefixes) {
    if (name.compare(0, std::char_traits<char>::length(p), p) == 0) return true;
  }
  return false;
}

bool IsFunctionType(unsigned char type) { return type == STT_FUNC || type == STT_GNU_IFUNC; }

bool IsExported(const ElfSymbol& s) {
  return s.bind != STB_LOCAL && (s.visibility == STV_DEFAULT || s.visibility == STV_PROTECTED);
}

std::string HiddenKind(const ElfSymbol& s, bool in_dynamic) {
  std::string kind = in_dynamic ? "in the dynamic symbol table but" : "only in .symtab, not in .dynsym:";
  kind += s.bind == STB_LOCAL ? " local binding" : s.bind == STB_WEAK ? " weak binding" : " global binding";
  switch (s.visibility) {
    case STV_HIDDEN: kind += ", hidden visibility"; break;
    case STV_INTERNAL: kind += ", internal visibility"; break;
    case STV_PROTECTED: kind += ", protected visibility"; break;
    default: break;
  }
  if (!in_dynamic) kind += " (hidden visibility or a version script's `local:` made it local)";
  return kind;
}

void CheckEntryPoints(const SymbolTables& t, FindingSink& sink) {
  std::map<std::string, const ElfSymbol*> dynamic_defined;
  for (const ElfSymbol& s : t.dynamic) {
    if (s.defined && !s.name.empty()) dynamic_defined.emplace(s.name, &s);
  }
  std::set<std::string> present;  // entry points defined in some form
  bool any_ok = false, explained = false;
  for (const char* e : kEntryPoints) {
    auto it = dynamic_defined.find(e);
    if (it == dynamic_defined.end()) continue;
    present.insert(e);
    const ElfSymbol& s = *it->second;
    if (!IsFunctionType(s.type)) {
      sink.Add(Finding(RuleId::kSymEntryNotFunction).Set("entry", e).Set("kind", SymbolTypeName(s.type)));
      explained = true;
    } else if (!IsExported(s)) {
      sink.Add(Finding(RuleId::kSymEntryHidden).Set("entry", e).Set("kind", HiddenKind(s, true)));
      explained = true;
    } else {
      any_ok = true;
    }
  }
  // Defined, but only in the static symbol table: not exported.
  for (const char* e : kEntryPoints) {
    if (present.count(e)) continue;
    for (const ElfSymbol& s : t.statics) {
      if (s.defined && s.name == e) {
        sink.Add(Finding(RuleId::kSymEntryHidden).Set("entry", e).Set("kind", HiddenKind(s, false)));
        present.insert(e);
        explained = true;
        break;
      }
    }
  }
  // Entry points with C++ linkage.
  for (const ElfSymbol& s : t.dynamic) {
    if (!s.defined) continue;
    std::string entry = MangledEntryPoint(s.name);
    if (entry.empty() || dynamic_defined.count(entry)) continue;
    sink.Add(Finding(RuleId::kSymEntryMangled)
                 .Set("symbol", s.name)
                 .Set("entry", entry)
                 .Set("demangled", Demangle(s.name)));
    present.insert(entry);
    explained = true;
  }
  // Misspelled entry points: exported names close to one that is missing.
  std::string closest;
  for (const auto& [name, sym] : dynamic_defined) {
    if (IsEntryPoint(name) || name.compare(0, 2, "_Z") == 0 || !IsExported(*sym)) continue;
    int best_score = 100;
    std::string best;
    for (const char* e : kEntryPoints) {
      int score = 0;
      if (!present.count(e) && IsNearMiss(name, e, &score) && score < best_score) {
        best_score = score;
        best = e;
      }
    }
    if (best.empty()) continue;
    sink.Add(Finding(RuleId::kSymEntryNearMiss).Set("symbol", name).Set("entry", best));
    if (closest.empty()) closest = name + " (for " + best + ")";
  }
  if (!any_ok && !explained) {
    size_t exported = 0;
    for (const auto& entry : dynamic_defined) exported += IsExported(*entry.second) ? 1 : 0;
    std::string detail = "none of them is defined in the dynamic symbol table (" +
                         std::to_string(exported) + (exported == 1 ? " symbol" : " symbols") +
                         " exported)";
    if (!closest.empty()) detail += "; closest: " + closest + ", see TFP-SYM-ENTRY-NEAR-MISS";
    if (t.statics.empty()) detail += "; the file is stripped, so hidden definitions cannot be seen";
    sink.Add(Finding(RuleId::kSymNoEntry).Set("entries", EntryPointList()).Set("detail", detail));
  }
}

void CheckImports(const PhaseContext& c, const SymbolTables& t, FindingSink& sink) {
  const uint64_t target = uint64_t{1} << c.release_index;
  std::map<std::string, bool> c_api;  // name -> weak
  std::map<std::string, std::string> internals;  // name -> namespace
  for (const ElfSymbol& s : t.dynamic) {
    if (s.defined || s.name.empty()) continue;
    if (HasImportPrefix(s.name)) {
      c_api.emplace(s.name, s.bind == STB_WEAK);
    } else {
      std::string ns = InternalsNamespace(s.name);
      if (!ns.empty()) internals.emplace(s.name, ns);
    }
  }
  for (const auto& [name, weak] : c_api) {
    const uint64_t mask = ExportMask(name.c_str());
    if (mask & target) continue;
    const std::string releases =
        mask == 0 ? "no release exports it" : "exported by " + ReleaseRanges(mask);
    sink.Add(Finding(weak ? RuleId::kSymWeakImport : RuleId::kSymUndefinedImport)
                 .Set("symbol", name)
                 .Set("release", c.release)
                 .Set("releases", releases));
  }
  for (const auto& [name, ns] : internals) {
    sink.Add(Finding(RuleId::kSymCxxInternals)
                 .Set("symbol", name)
                 .Set("demangled", Demangle(name))
                 .Set("namespace", ns));
  }
}

}  // namespace

void RunSymbolPhase(const PhaseContext& c, FindingSink& sink) {
  const SymbolTables t = ReadSymbols(c.path);
  if (!t.ok || !t.has_dynamic) {
    sink.Add(Finding(RuleId::kSymNoDynsym)
                 .Set("detail", !t.ok ? t.error
                                      : "no .dynsym section and no usable dynamic segment "
                                        "(PT_DYNAMIC with DT_SYMTAB and DT_STRTAB)"));
    return;
  }
  CheckEntryPoints(t, sink);
  CheckImports(c, t, sink);
}

}  // namespace tfp_validator
