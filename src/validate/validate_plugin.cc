// SPDX-License-Identifier: Apache-2.0
// validate_plugin: check a PluggableDevice plugin before TensorFlow loads it.
//
//   validate_plugin [--tf RELEASE|all] [--json FILE] [--junit FILE] [--timeout SECONDS]
//                   [--phases LIST] [--rules IDS] [--skip-rules IDS] [--in-process]
//                   [--trace FILE]
//                   [--color=auto|always|never] PLUGIN.so
//
// Exit status: 0 no errors, 1 errors found, 2 the file cannot be validated
// (a file phase error) or bad usage; with --tf all: 0 at least one release
// works, 1 none does, 2 as before. Rules: docs/rules.md; docs/validate.md.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "tensorflow/c/tf_status.h"
#include "tfplugin/validate.h"

namespace {

const char kUsage[] =
    "usage: validate_plugin [--tf RELEASE|all] [--json FILE] [--junit FILE]\n"
    "                       [--timeout SECONDS] [--phases LIST] [--rules IDS]\n"
    "                       [--skip-rules IDS] [--in-process] [--trace FILE]\n"
    "                       [--color=WHEN] PLUGIN.so\n"
    "       validate_plugin --list-rules | --list-releases\n"
    "\n"
    "Checks a TensorFlow PluggableDevice plugin (a shared object) against the ABI\n"
    "of a TensorFlow release, without TensorFlow, and reports every problem with a\n"
    "stable rule id (docs/rules.md), what was expected, what was found, and a fix.\n"
    "\n"
    "  --tf RELEASE       release to check against, e.g. 2.16 (default: the newest known)\n"
    "  --tf all           check against every known release in turn and print a\n"
    "                     compatibility matrix: one row per release (its ABI revisions,\n"
    "                     errors, warnings, works / fails: first rule id)\n"
    "  --json FILE        also write the findings as a JSON array to FILE ('-': stdout,\n"
    "                     the human report then goes to stderr)\n"
    "  --junit FILE       also write a JUnit XML report to FILE ('-': stdout): one\n"
    "                     testsuite per phase, one testcase per rule or finding\n"
    "  --timeout SECONDS  per phase (default 30); a phase running longer is killed\n"
    "  --phases LIST      comma-separated phases to run: file, symbols, registration,\n"
    "                     runtime, kernels\n"
    "                     (default: all; file always runs). registration loads the\n"
    "                     plugin and runs its SE_InitPlugin: leave it out for code\n"
    "                     you do not trust\n"
    "  --rules IDS        report only these rules: comma-separated ids or prefixes\n"
    "                     ending in '*' (TFP-RT-*); the checks still run\n"
    "  --skip-rules IDS   do not report these rules (same form); their findings are\n"
    "                     left out of the report, the counts and the exit status\n"
    "  --in-process       run every phase and check in this process: no fork, no\n"
    "                     timeout, for debugging the plugin under gdb. A plugin that\n"
    "                     crashes then crashes the validator\n"
    "  --trace FILE       append the runtime phase's call trace to FILE: every plugin\n"
    "                     callback the checks make, through the validation layer,\n"
    "                     one line each with its arguments and result\n"
    "  --color=WHEN       colour severities: auto (default: when the report goes to a\n"
    "                     terminal and NO_COLOR is unset), always, never\n"
    "  --list-rules       print every rule: id, phase, severity, summary\n"
    "  --list-releases    print the known releases, oldest first\n"
    "\n"
    "Exit status: 0 no errors (warnings allowed), 1 errors found, 2 the file cannot\n"
    "be validated at all (missing, not an ELF shared object for this machine, ...)\n"
    "or bad usage (unknown option, release or rule id). With --tf all: 0 the plugin\n"
    "works with at least one release, 1 with none, 2 as above.\n";

// "file,symbols" -> TFP_PHASE_FILE | TFP_PHASE_SYMBOLS; 0 if a name is unknown.
unsigned ParsePhases(const std::string& list) {
  static const struct {
    const char* name;
    unsigned bit;
  } kNames[] = {{"file", TFP_PHASE_FILE}, {"symbols", TFP_PHASE_SYMBOLS},
                {"registration", TFP_PHASE_REGISTRATION},
                {"runtime", TFP_PHASE_RUNTIME}, {"kernels", TFP_PHASE_KERNELS}};
  unsigned bits = 0;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string name = list.substr(start, comma - start);
    unsigned bit = 0;
    for (const auto& n : kNames) {
      if (name == n.name) bit = n.bit;
    }
    if (bit == 0) return 0;
    bits |= bit;
    start = comma + 1;
  }
  return bits;
}

const char* SeverityText(tfp_severity severity) {
  switch (severity) {
    case TFP_SEVERITY_ERROR: return "error";
    case TFP_SEVERITY_WARNING: return "warning";
    case TFP_SEVERITY_INFO: return "info";
  }
  return "error";
}

int Usage(const char* problem) {
  std::fprintf(stderr, "validate_plugin: %s\n\n%s", problem, kUsage);
  return 2;
}

void JsonString(std::FILE* out, const char* s) {
  std::fputc('"', out);
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(s != nullptr ? s : ""); *p; ++p) {
    switch (*p) {
      case '"': std::fputs("\\\"", out); break;
      case '\\': std::fputs("\\\\", out); break;
      case '\n': std::fputs("\\n", out); break;
      case '\r': std::fputs("\\r", out); break;
      case '\t': std::fputs("\\t", out); break;
      default:
        if (*p < 0x20) {
          std::fprintf(out, "\\u%04x", *p);
        } else {
          std::fputc(*p, out);  // UTF-8 passes through; other bytes are the file's
        }
    }
  }
  std::fputc('"', out);
}

void WriteJson(std::FILE* out, const tfp_report* report) {
  std::fputs("[", out);
  const size_t n = tfp_report_finding_count(report);
  for (size_t i = 0; i < n; ++i) {
    const tfp_finding* f = tfp_report_finding(report, i);
    std::fputs(i == 0 ? "\n  {" : ",\n  {", out);
    const struct {
      const char* key;
      const char* value;
    } keys[] = {
        {"rule_id", tfp_finding_rule_id(f)}, {"severity", tfp_finding_severity_name(f)},
        {"phase", tfp_finding_phase(f)},     {"file", tfp_finding_field(f, "file")},
        {"subject", tfp_finding_subject(f)}, {"message", tfp_finding_message(f)},
        {"expected", tfp_finding_expected(f)}, {"actual", tfp_finding_actual(f)},
        {"fix", tfp_finding_fix(f)},
    };
    for (const auto& kv : keys) {
      std::fprintf(out, "\"%s\": ", kv.key);
      JsonString(out, kv.value);
      std::fputs(", ", out);
    }
    std::fputs("\"fields\": {", out);
    for (size_t j = 0; j < tfp_finding_field_count(f); ++j) {
      if (j != 0) std::fputs(", ", out);
      JsonString(out, tfp_finding_field_name(f, j));
      std::fputs(": ", out);
      JsonString(out, tfp_finding_field_value(f, j));
    }
    std::fputs("}}", out);
  }
  std::fputs(n == 0 ? "]\n" : "\n]\n", out);
}

// ANSI colours for a terminal; empty when colour is off.
struct Colors {
  bool on = false;
  const char* Start(const char* severity_or_verdict) const {
    if (!on) return "";
    const std::string w = severity_or_verdict;
    if (w == "error" || w == "fails" || w == "fail" || w == "crash" || w == "timeout") {
      return "\033[1;31m";
    }
    if (w == "warning" || w == "warn") return "\033[1;33m";
    if (w == "info") return "\033[1;36m";
    if (w == "works" || w == "pass") return "\033[1;32m";
    return "";
  }
  const char* End(const char* word) const { return on && Start(word)[0] != '\0' ? "\033[0m" : ""; }
};

enum class ColorMode { kAuto, kAlways, kNever };

bool UseColor(ColorMode mode, std::FILE* out) {
  if (mode == ColorMode::kAlways) return true;
  if (mode == ColorMode::kNever) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fileno(out)) != 0;
}

void WriteHuman(std::FILE* out, const tfp_report* report, const Colors& c) {
  const char* path = tfp_report_path(report);
  std::fprintf(out, "validate_plugin: %s against TensorFlow %s\n", path, tfp_report_release(report));
  const size_t n = tfp_report_finding_count(report);
  for (size_t i = 0; i < n; ++i) {
    const tfp_finding* f = tfp_report_finding(report, i);
    // The file as the findings spell it: printable (the path may not be).
    const char* file = tfp_finding_field(f, "file");
    const char* severity = tfp_finding_severity_name(f);
    std::fprintf(out, "\n%s%s%s[%s] %s: ", c.Start(severity), severity, c.End(severity),
                 tfp_finding_rule_id(f), file);
    if (std::strcmp(tfp_finding_subject(f), file) != 0) {
      std::fprintf(out, "%s: ", tfp_finding_subject(f));
    }
    std::fprintf(out, "%s\n", tfp_finding_message(f));
    std::fprintf(out, "  expected: %s\n", tfp_finding_expected(f));
    std::fprintf(out, "  actual:   %s\n", tfp_finding_actual(f));
    std::fprintf(out, "  fix:      %s\n", tfp_finding_fix(f));
  }
  std::fputs("\nphases:", out);
  for (size_t i = 0; i < tfp_report_phase_count(report); ++i) {
    const char* outcome = tfp_outcome_name(tfp_report_phase_outcome(report, i));
    std::fprintf(out, "%s %s %s%s%s", i == 0 ? "" : ",", tfp_report_phase_name(report, i),
                 c.Start(outcome), outcome, c.End(outcome));
  }
  const size_t errors = tfp_report_error_count(report);
  const size_t warnings = tfp_report_warning_count(report);
  std::fprintf(out, "\n%zu error%s, %zu warning%s\n", errors, errors == 1 ? "" : "s", warnings,
               warnings == 1 ? "" : "s");
}

// ---- JUnit XML

// Text for an XML 1.0 attribute or element: markup escaped, UTF-8 kept,
// bytes that are not UTF-8 or not allowed in XML as \xNN.
std::string Xml(const char* s) {
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(s != nullptr ? s : "");
  const size_t n = std::strlen(reinterpret_cast<const char*>(p));
  for (size_t i = 0; i < n;) {
    const unsigned char ch = p[i];
    size_t len = ch < 0x80 ? 1 : (ch & 0xe0) == 0xc0 ? 2 : (ch & 0xf0) == 0xe0 ? 3 : (ch & 0xf8) == 0xf0 ? 4 : 0;
    bool ok = len != 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) ok = (p[i + k] & 0xc0) == 0x80;
    if (ok && len > 1) {
      uint32_t cp = ch & (0x7f >> len);
      for (size_t k = 1; k < len; ++k) cp = cp << 6 | (p[i + k] & 0x3f);
      static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) && cp != 0xfffe &&
           cp != 0xffff;
    }
    if (ok && len == 1 && ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') ok = false;
    if (!ok) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      out += buf;
      ++i;
      continue;
    }
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += "&#9;"; break;
      default: out.append(reinterpret_cast<const char*>(p + i), len);
    }
    i += len;
  }
  return out;
}

// The finding's human block, as text.
std::string FindingText(const tfp_finding* f) {
  std::string t = std::string(tfp_finding_severity_name(f)) + "[" + tfp_finding_rule_id(f) + "] " +
                  tfp_finding_subject(f) + ": " + tfp_finding_message(f) + "\n";
  t += std::string("expected: ") + tfp_finding_expected(f) + "\n";
  t += std::string("actual:   ") + tfp_finding_actual(f) + "\n";
  t += std::string("fix:      ") + tfp_finding_fix(f) + "\n";
  return t;
}

// The phase a finding belongs to: its rule's, or for an isolation finding
// the phase it names.
std::string FindingPhase(const tfp_finding* f) {
  const std::string phase = tfp_finding_phase(f);
  if (phase != "isolation") return phase;
  const char* named = tfp_finding_field(f, "phase");
  return named != nullptr ? named : phase;
}

struct Totals {
  size_t tests = 0, failures = 0, skipped = 0;
};

// One <testsuite> per phase of `report`; `prefix` ("2.18/") names the
// release in --tf all.
std::string JunitSuites(const tfp_report* report, const std::string& prefix, Totals* totals) {
  std::string xml;
  const size_t phase_count = tfp_report_phase_count(report);
  std::vector<std::string> phase_names;
  for (size_t i = 0; i < phase_count; ++i) phase_names.push_back(tfp_report_phase_name(report, i));
  for (size_t p = 0; p < phase_count; ++p) {
    const std::string& phase = phase_names[p];
    const tfp_outcome outcome = tfp_report_phase_outcome(report, p);
    std::string cases;
    size_t tests = 0, failures = 0, skipped = 0;
    std::vector<std::string> found;  // rule ids with a finding in this phase
    for (size_t i = 0; i < tfp_report_finding_count(report); ++i) {
      const tfp_finding* f = tfp_report_finding(report, i);
      std::string fp = FindingPhase(f);
      bool known = false;
      for (const auto& n : phase_names) known = known || n == fp;
      if (!known) fp = phase_names.back();
      if (fp != phase) continue;
      found.push_back(tfp_finding_rule_id(f));
      ++tests;
      const std::string name = std::string(tfp_finding_rule_id(f)) + ": " + tfp_finding_subject(f);
      cases += "    <testcase classname=\"" + Xml((prefix + phase).c_str()) + "\" name=\"" +
               Xml(name.c_str()) + "\">\n";
      if (tfp_finding_severity(f) == TFP_SEVERITY_ERROR) {
        ++failures;
        cases += "      <failure type=\"" + Xml(tfp_finding_rule_id(f)) + "\" message=\"" +
                 Xml(tfp_finding_message(f)) + "\">" + Xml(FindingText(f).c_str()) + "</failure>\n";
      } else {
        cases += "      <system-out>" + Xml(FindingText(f).c_str()) + "</system-out>\n";
      }
      cases += "    </testcase>\n";
    }
    // Every other reported rule of the phase: passed, or skipped with the
    // phase or because its check did not apply.
    for (size_t r = 0; r < tfp_rule_count(); ++r) {
      const char* id = tfp_rule_id(r);
      if (phase != tfp_rule_phase(r) || !tfp_report_rule_reported(report, id)) continue;
      bool has = false;
      for (const auto& g : found) has = has || g == id;
      if (has) continue;
      ++tests;
      cases += "    <testcase classname=\"" + Xml((prefix + phase).c_str()) + "\" name=\"" + Xml(id) +
               "\"";
      const char* not_checked = tfp_report_rule_not_checked(report, id);
      if (outcome == TFP_OUTCOME_SKIP) {
        ++skipped;
        cases += ">\n      <skipped message=\"the " + Xml(phase.c_str()) +
                 " phase did not run\"/>\n    </testcase>\n";
      } else if (not_checked != nullptr) {
        ++skipped;
        cases += ">\n      <skipped message=\"not checked: " + Xml(not_checked) + "\"/>\n    </testcase>\n";
      } else {
        cases += "/>\n";
      }
    }
    xml += "  <testsuite name=\"" + Xml((prefix + phase).c_str()) + "\" tests=\"" +
           std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
           "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\">\n";
    xml += "    <properties>\n";
    xml += std::string("      <property name=\"file\" value=\"") + Xml(tfp_report_path(report)) + "\"/>\n";
    xml += std::string("      <property name=\"release\" value=\"") + Xml(tfp_report_release(report)) +
           "\"/>\n";
    xml += std::string("      <property name=\"outcome\" value=\"") + tfp_outcome_name(outcome) + "\"/>\n";
    xml += "    </properties>\n" + cases + "  </testsuite>\n";
    totals->tests += tests;
    totals->failures += failures;
    totals->skipped += skipped;
  }
  return xml;
}

std::string JunitDocument(const std::string& suites, const Totals& t) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"validate_plugin\" tests=\"" +
         std::to_string(t.tests) + "\" failures=\"" + std::to_string(t.failures) +
         "\" errors=\"0\" skipped=\"" + std::to_string(t.skipped) + "\">\n" + suites +
         "</testsuites>\n";
}

// Writes `text` to FILE ('-': stdout); false, with a message, if it cannot.
bool WriteFile(const char* file, const std::string& text, const char* what) {
  const bool to_stdout = std::strcmp(file, "-") == 0;
  std::FILE* out = to_stdout ? stdout : std::fopen(file, "w");
  if (out == nullptr) {
    std::fprintf(stderr, "validate_plugin: cannot write %s %s: %s\n", what, file, std::strerror(errno));
    return false;
  }
  std::fwrite(text.data(), 1, text.size(), out);
  if ((to_stdout ? std::fflush(out) : std::fclose(out)) != 0) {
    std::fprintf(stderr, "validate_plugin: cannot write %s %s: %s\n", what, file, std::strerror(errno));
    return false;
  }
  return true;
}

std::string JsonFindings(const tfp_report* report) {
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* mem = open_memstream(&buf, &size);
  if (mem == nullptr) return "[]\n";
  WriteJson(mem, report);
  std::fclose(mem);
  std::string out(buf, size);
  std::free(buf);
  return out;
}

// "2.5-2.7, 2.9" for the releases whose index is set in `works`.
std::string ReleaseRanges(const std::vector<bool>& works) {
  std::string out;
  for (size_t i = 0; i < works.size();) {
    if (!works[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < works.size() && works[j + 1]) ++j;
    if (!out.empty()) out += ", ";
    out += tfp_validate_release(i);
    if (j != i) out += std::string("-") + tfp_validate_release(j);
    i = j + 1;
  }
  return out;
}


struct Args {
  const char* release = nullptr;
  const char* json = nullptr;
  const char* junit = nullptr;
  const char* plugin = nullptr;
  const char* rules = nullptr;
  const char* skip_rules = nullptr;
  unsigned timeout_ms = 0;
  unsigned phases = TFP_PHASE_ALL;
  bool in_process = false;
  const char* trace = nullptr;
  ColorMode color = ColorMode::kAuto;
};

tfp_report* Validate(const Args& args, const char* release) {
  tfp_validate_options options;
  TFP_STRUCT_INIT(&options, TFP_VALIDATE_OPTIONS_STRUCT_SIZE);
  options.tf_release = release;
  options.timeout_ms = args.timeout_ms;
  options.phases = args.phases;
  options.in_process = args.in_process ? 1 : 0;
  options.rules = args.rules;
  options.skip_rules = args.skip_rules;
  options.trace_path = args.trace;
  TF_Status* status = TF_NewStatus();
  tfp_report* report = tfp_validate(args.plugin, &options, status);
  if (report == nullptr) std::fprintf(stderr, "validate_plugin: %s\n", TF_Message(status));
  TF_DeleteStatus(status);
  return report;
}

// The human report goes to stderr when JSON or JUnit goes to stdout.
std::FILE* HumanStream(const Args& args) {
  const bool taken = (args.json != nullptr && std::strcmp(args.json, "-") == 0) ||
                     (args.junit != nullptr && std::strcmp(args.junit, "-") == 0);
  return taken ? stderr : stdout;
}

int ValidateOne(const Args& args) {
  tfp_report* report = Validate(args, args.release);
  if (report == nullptr) return 2;
  std::FILE* human = HumanStream(args);
  Colors colors;
  colors.on = UseColor(args.color, human);
  WriteHuman(human, report, colors);
  int exit_status = tfp_report_exit_status(report);
  if (args.json != nullptr && !WriteFile(args.json, JsonFindings(report), "JSON report")) {
    exit_status = 2;
  }
  if (args.junit != nullptr) {
    Totals totals;
    const std::string suites = JunitSuites(report, "", &totals);
    if (!WriteFile(args.junit, JunitDocument(suites, totals), "JUnit report")) exit_status = 2;
  }
  tfp_report_delete(report);
  return exit_status;
}

// --tf all: every known release in turn, a row each.
int ValidateAll(const Args& args) {
  std::FILE* human = HumanStream(args);
  Colors colors;
  colors.on = UseColor(args.color, human);
  const size_t n = tfp_validate_release_count();
  std::vector<bool> works(n, false);
  std::string json = "[";
  std::string suites;
  Totals totals;
  size_t errors_total = 0, warnings_total = 0;
  bool header = false;
  for (size_t i = 0; i < n; ++i) {
    tfp_report* report = Validate(args, tfp_validate_release(i));
    if (report == nullptr) return 2;
    if (!tfp_report_validated(report)) {
      // The file phase does not depend on the release: no plugin at all.
      WriteHuman(human, report, colors);
      if (args.json != nullptr) WriteFile(args.json, JsonFindings(report), "JSON report");
      if (args.junit != nullptr) {
        Totals t;
        const std::string s = JunitSuites(report, "", &t);
        WriteFile(args.junit, JunitDocument(s, t), "JUnit report");
      }
      tfp_report_delete(report);
      return 2;
    }
    if (!header) {
      std::fprintf(human, "validate_plugin: %s against every known TensorFlow release\n\n",
                   tfp_report_path(report));
      std::fprintf(human, "%-8s %-14s %6s %8s  %s\n", "release", "revisions", "errors", "warnings",
                   "verdict");
      header = true;
    }
    const size_t errors = tfp_report_error_count(report);
    const size_t warnings = tfp_report_warning_count(report);
    errors_total += errors;
    warnings_total += warnings;
    std::string verdict = "works";
    for (size_t k = 0; k < tfp_report_finding_count(report) && errors != 0; ++k) {
      const tfp_finding* f = tfp_report_finding(report, k);
      if (tfp_finding_severity(f) == TFP_SEVERITY_ERROR) {
        verdict = std::string("fails: ") + tfp_finding_rule_id(f);
        break;
      }
    }
    if (errors != 0 && verdict == "works") verdict = "fails";
    works[i] = errors == 0;
    const char* word = works[i] ? "works" : "fails";
    std::fprintf(human, "%-8s %-14s %6zu %8zu  %s%s%s%s\n", tfp_validate_release(i),
                 tfp_validate_release_revisions(i), errors, warnings, colors.Start(word), word,
                 colors.End(word), verdict.c_str() + std::strlen(word));
    if (args.json != nullptr) {
      std::string findings = JsonFindings(report);
      while (!findings.empty() && findings.back() == '\n') findings.pop_back();
      std::string indented;
      for (char ch : findings) {
        indented += ch;
        if (ch == '\n') indented += "  ";
      }
      json += std::string(i == 0 ? "\n" : ",\n") + "  {\"release\": \"" + tfp_validate_release(i) +
              "\", \"revisions\": \"" + tfp_validate_release_revisions(i) +
              "\", \"errors\": " + std::to_string(errors) + ", \"warnings\": " +
              std::to_string(warnings) + ", \"works\": " + (works[i] ? "true" : "false") +
              ", \"verdict\": \"" + verdict + "\",\n   \"findings\": " + indented + "}";
    }
    if (args.junit != nullptr) suites += JunitSuites(report, std::string(tfp_validate_release(i)) + "/", &totals);
    tfp_report_delete(report);
  }
  size_t working = 0;
  for (bool w : works) working += w;
  const std::string ranges = ReleaseRanges(works);
  if (working == 0) {
    std::fprintf(human, "\nworks with no known TensorFlow release\n");
  } else {
    std::fprintf(human, "\nworks with TensorFlow %s\n", ranges.c_str());
  }
  std::fprintf(human, "%zu release%s: %zu work%s, %zu fail%s (%zu error%s, %zu warning%s in all)\n", n,
               n == 1 ? "" : "s", working, working == 1 ? "s" : "", n - working,
               n - working == 1 ? "s" : "", errors_total, errors_total == 1 ? "" : "s",
               warnings_total, warnings_total == 1 ? "" : "s");
  int exit_status = working != 0 ? 0 : 1;
  json += "\n]\n";
  if (args.json != nullptr && !WriteFile(args.json, json, "JSON report")) exit_status = 2;
  if (args.junit != nullptr && !WriteFile(args.junit, JunitDocument(suites, totals), "JUnit report")) {
    exit_status = 2;
  }
  return exit_status;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--list-rules") {
      for (size_t r = 0; r < tfp_rule_count(); ++r) {
        std::printf("%-30s %-12s %-7s %s\n", tfp_rule_id(r), tfp_rule_phase(r),
                    SeverityText(tfp_rule_severity(r)), tfp_rule_summary(r));
      }
      return 0;
    } else if (arg == "--list-releases") {
      for (size_t r = 0; r < tfp_validate_release_count(); ++r) std::puts(tfp_validate_release(r));
      return 0;
    } else if (arg == "--tf") {
      if ((args.release = value()) == nullptr) {
        return Usage("--tf needs a release, e.g. --tf 2.16, or all");
      }
    } else if (arg == "--json") {
      if ((args.json = value()) == nullptr) return Usage("--json needs a file name");
    } else if (arg == "--junit") {
      if ((args.junit = value()) == nullptr) return Usage("--junit needs a file name");
    } else if (arg == "--rules") {
      if ((args.rules = value()) == nullptr) return Usage("--rules needs rule ids, e.g. TFP-RT-*");
    } else if (arg == "--skip-rules") {
      if ((args.skip_rules = value()) == nullptr) {
        return Usage("--skip-rules needs rule ids, e.g. TFP-SYM-CXX-INTERNALS");
      }
    } else if (arg == "--in-process") {
      args.in_process = true;
    } else if (arg == "--trace") {
      if ((args.trace = value()) == nullptr) return Usage("--trace needs a file name");
    } else if (arg == "--color" || arg.compare(0, 8, "--color=") == 0) {
      const char* v = arg == "--color" ? value() : argv[i] + 8;
      const std::string when = v != nullptr ? v : "";
      if (when == "auto") {
        args.color = ColorMode::kAuto;
      } else if (when == "always") {
        args.color = ColorMode::kAlways;
      } else if (when == "never") {
        args.color = ColorMode::kNever;
      } else {
        return Usage("--color: expected auto, always or never");
      }
    } else if (arg == "--timeout") {
      const char* v = value();
      if (v == nullptr) return Usage("--timeout needs a number of seconds");
      char* end = nullptr;
      errno = 0;
      double seconds = std::strtod(v, &end);
      if (errno != 0 || end == v || *end != '\0' || !(seconds >= 0.001) || seconds > 86400) {
        return Usage("--timeout: expected seconds between 0.001 and 86400");
      }
      args.timeout_ms = static_cast<unsigned>(seconds * 1000 + 0.5);
    } else if (arg == "--phases") {
      const char* v = value();
      if (v == nullptr || (args.phases = ParsePhases(v)) == 0) {
        return Usage("--phases: expected a comma-separated list of file, symbols, registration, runtime");
      }
    } else if (arg == "--") {
      if (i + 1 < argc && args.plugin == nullptr && i + 2 == argc) {
        args.plugin = argv[++i];
      } else {
        return Usage("expected exactly one plugin after --");
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage(("unknown option " + arg).c_str());
    } else if (args.plugin != nullptr) {
      return Usage("one plugin at a time");
    } else {
      args.plugin = argv[i];
    }
  }
  if (args.plugin == nullptr) return Usage("no plugin given");
  if (args.json != nullptr && args.junit != nullptr && std::strcmp(args.json, "-") == 0 &&
      std::strcmp(args.junit, "-") == 0) {
    return Usage("--json - and --junit -: only one of them can go to stdout");
  }
  if (args.release != nullptr && std::strcmp(args.release, "all") == 0) return ValidateAll(args);
  return ValidateOne(args);
}
