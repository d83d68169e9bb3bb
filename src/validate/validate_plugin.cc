// SPDX-License-Identifier: Apache-2.0
// validate_plugin: check a PluggableDevice plugin before TensorFlow loads it.
//
//   validate_plugin [--tf RELEASE] [--json FILE] [--timeout SECONDS] [--phases LIST] PLUGIN.so
//
// Exit status: 0 no errors, 1 errors found, 2 the file cannot be validated
// (a file phase error) or bad usage. Rules: docs/rules.md.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tensorflow/c/tf_status.h"
#include "tfplugin/validate.h"

namespace {

const char kUsage[] =
    "usage: validate_plugin [--tf RELEASE] [--json FILE] [--timeout SECONDS] [--phases LIST]\n"
    "                       PLUGIN.so\n"
    "       validate_plugin --list-rules | --list-releases\n"
    "\n"
    "Checks a TensorFlow PluggableDevice plugin (a shared object) against the ABI\n"
    "of a TensorFlow release, without TensorFlow, and reports every problem with a\n"
    "stable rule id (docs/rules.md), what was expected, what was found, and a fix.\n"
    "\n"
    "  --tf RELEASE       release to check against, e.g. 2.16 (default: the newest known)\n"
    "  --json FILE        also write the findings as a JSON array to FILE ('-': stdout,\n"
    "                     the human report then goes to stderr)\n"
    "  --timeout SECONDS  per phase (default 30); a phase running longer is killed\n"
    "  --phases LIST      comma-separated phases to run: file, symbols, registration,\n"
    "                     runtime\n"
    "                     (default: all; file always runs). registration loads the\n"
    "                     plugin and runs its SE_InitPlugin: leave it out for code\n"
    "                     you do not trust\n"
    "  --list-rules       print every rule: id, phase, severity, summary\n"
    "  --list-releases    print the known releases, oldest first\n"
    "\n"
    "Exit status: 0 no errors (warnings allowed), 1 errors found, 2 the file cannot\n"
    "be validated at all (missing, not an ELF shared object for this machine, ...)\n"
    "or bad usage.\n";

// "file,symbols" -> TFP_PHASE_FILE | TFP_PHASE_SYMBOLS; 0 if a name is unknown.
unsigned ParsePhases(const std::string& list) {
  static const struct {
    const char* name;
    unsigned bit;
  } kNames[] = {{"file", TFP_PHASE_FILE}, {"symbols", TFP_PHASE_SYMBOLS},
                {"registration", TFP_PHASE_REGISTRATION},
                {"runtime", TFP_PHASE_RUNTIME}};
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

void WriteHuman(std::FILE* out, const tfp_report* report) {
  const char* path = tfp_report_path(report);
  std::fprintf(out, "validate_plugin: %s against TensorFlow %s\n", path, tfp_report_release(report));
  const size_t n = tfp_report_finding_count(report);
  for (size_t i = 0; i < n; ++i) {
    const tfp_finding* f = tfp_report_finding(report, i);
    // The file as the findings spell it: printable (the path may not be).
    const char* file = tfp_finding_field(f, "file");
    std::fprintf(out, "\n%s[%s] %s: ", tfp_finding_severity_name(f), tfp_finding_rule_id(f), file);
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
    std::fprintf(out, "%s %s %s", i == 0 ? "" : ",", tfp_report_phase_name(report, i),
                 tfp_outcome_name(tfp_report_phase_outcome(report, i)));
  }
  const size_t errors = tfp_report_error_count(report);
  const size_t warnings = tfp_report_warning_count(report);
  std::fprintf(out, "\n%zu error%s, %zu warning%s\n", errors, errors == 1 ? "" : "s", warnings,
               warnings == 1 ? "" : "s");
}

}  // namespace

int main(int argc, char** argv) {
  const char* release = nullptr;
  const char* json = nullptr;
  const char* plugin = nullptr;
  unsigned timeout_ms = 0;
  unsigned phases = TFP_PHASE_ALL;
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
      if ((release = value()) == nullptr) return Usage("--tf needs a release, e.g. --tf 2.16");
    } else if (arg == "--json") {
      if ((json = value()) == nullptr) return Usage("--json needs a file name");
    } else if (arg == "--timeout") {
      const char* v = value();
      if (v == nullptr) return Usage("--timeout needs a number of seconds");
      char* end = nullptr;
      errno = 0;
      double seconds = std::strtod(v, &end);
      if (errno != 0 || end == v || *end != '\0' || !(seconds >= 0.001) || seconds > 86400) {
        return Usage("--timeout: expected seconds between 0.001 and 86400");
      }
      timeout_ms = static_cast<unsigned>(seconds * 1000 + 0.5);
    } else if (arg == "--phases") {
      const char* v = value();
      if (v == nullptr || (phases = ParsePhases(v)) == 0) {
        return Usage("--phases: expected a comma-separated list of file, symbols, registration, runtime");
      }
    } else if (arg == "--") {
      if (i + 1 < argc && plugin == nullptr && i + 2 == argc) {
        plugin = argv[++i];
      } else {
        return Usage("expected exactly one plugin after --");
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage(("unknown option " + arg).c_str());
    } else if (plugin != nullptr) {
      return Usage("one plugin at a time");
    } else {
      plugin = argv[i];
    }
  }
  if (plugin == nullptr) return Usage("no plugin given");

  tfp_validate_options options;
  TFP_STRUCT_INIT(&options, TFP_VALIDATE_OPTIONS_STRUCT_SIZE);
  options.tf_release = release;
  options.timeout_ms = timeout_ms;
  options.phases = phases;
  TF_Status* status = TF_NewStatus();
  tfp_report* report = tfp_validate(plugin, &options, status);
  if (report == nullptr) {
    std::fprintf(stderr, "validate_plugin: %s\n", TF_Message(status));
    TF_DeleteStatus(status);
    return 2;
  }
  TF_DeleteStatus(status);

  const bool json_stdout = json != nullptr && std::strcmp(json, "-") == 0;
  WriteHuman(json_stdout ? stderr : stdout, report);
  int exit_status = tfp_report_exit_status(report);
  if (json != nullptr) {
    std::FILE* out = json_stdout ? stdout : std::fopen(json, "w");
    if (out == nullptr) {
      std::fprintf(stderr, "validate_plugin: cannot write %s: %s\n", json, std::strerror(errno));
      exit_status = 2;
    } else {
      WriteJson(out, report);
      if ((out == stdout ? std::fflush(out) : std::fclose(out)) != 0) {
        std::fprintf(stderr, "validate_plugin: cannot write %s: %s\n", json, std::strerror(errno));
        exit_status = 2;
      }
    }
  }
  tfp_report_delete(report);
  return exit_status;
}
