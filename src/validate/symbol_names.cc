// SPDX-License-Identifier: Apache-2.0
#include "symbol_names.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace tfp_validator {
namespace {

std::string Lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Where `needle` occurs in `s` not preceded by a digit (so "3tsl" does not
// match inside "13tslfoo"), from `from`; npos if nowhere.
size_t FindLengthPrefixed(const std::string& s, const std::string& needle, size_t from = 0) {
  for (size_t at = s.find(needle, from); at != std::string::npos; at = s.find(needle, at + 1)) {
    if (at == 0 || !std::isdigit(static_cast<unsigned char>(s[at - 1]))) return at;
  }
  return std::string::npos;
}

// "ns::SE_InitPlugin(SE_PlatformRegistrationParams*, TF_Status*)" -> "SE_InitPlugin".
std::string FunctionBaseName(const std::string& demangled) {
  int depth = 0;
  size_t end = demangled.size();
  for (size_t i = 0; i < demangled.size(); ++i) {
    char c = demangled[i];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (c == '(' && depth == 0) {
      end = i;
      break;
    }
  }
  std::string qualified = demangled.substr(0, end);
  size_t colon = qualified.rfind("::");
  return colon == std::string::npos ? qualified : qualified.substr(colon + 2);
}

}  // namespace

bool IsEntryPoint(const std::string& name) {
  for (const char* e : kEntryPoints) {
    if (name == e) return true;
  }
  return false;
}

std::string EntryPointList() {
  std::string out;
  for (const char* e : kEntryPoints) {
    if (!out.empty()) out += ", ";
    out += e;
  }
  return out;
}

int EditDistance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

bool IsNearMiss(const std::string& name, const std::string& entry, int* score) {
  if (name == entry || name.size() < 4 || name.size() > entry.size() + 8) return false;
  const std::string a = Lower(name), b = Lower(entry);
  int s = -1;
  if (a == b) {
    s = 0;
  } else if (name.size() + 2 >= entry.size()) {
    int d = EditDistance(a, b);
    if (d <= 2) s = d;
  }
  if (s < 0 && a.find(b) != std::string::npos) s = 3;
  if (s < 0) return false;
  if (score != nullptr) *score = s;
  return true;
}

std::string Demangle(const std::string& name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return name;
  }
  std::string result(out);
  std::free(out);
  return result;
}

std::string MangledEntryPoint(const std::string& name) {
  if (name.compare(0, 2, "_Z") != 0) return "";
  for (const char* e : kEntryPoints) {
    const std::string prefixed = std::to_string(std::strlen(e)) + e;
    if (FindLengthPrefixed(name, prefixed) == std::string::npos) continue;
    const std::string demangled = Demangle(name);
    // A function named like the entry point (not, say, a parameter type).
    if (demangled == name || FunctionBaseName(demangled) == e) return e;
  }
  return "";
}

std::string InternalsNamespace(const std::string& name) {
  static const char* const kNamespaces[][2] = {
      {"10tensorflow", "tensorflow::"}, {"3tsl", "tsl::"}, {"4absl", "absl::"},
      {"6google8protobuf", "google::protobuf::"}, {"3xla", "xla::"},
  };
  if (name.compare(0, 2, "_Z") != 0) return "";
  size_t best = std::string::npos;
  std::string found;
  for (const auto& ns : kNamespaces) {
    size_t at = FindLengthPrefixed(name, ns[0], 2);
    if (at < best) {
      best = at;
      found = ns[1];
    }
  }
  return found;
}

}  // namespace tfp_validator
