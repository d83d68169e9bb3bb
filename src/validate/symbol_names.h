// SPDX-License-Identifier: Apache-2.0
// Recognising symbol names: TensorFlow's plugin entry points (exact,
// misspelled, C++-mangled) and TensorFlow's C++ internals.
#ifndef TFPLUGIN_VALIDATE_SYMBOL_NAMES_H_
#define TFPLUGIN_VALIDATE_SYMBOL_NAMES_H_

#include <string>

namespace tfp_validator {

// The names TensorFlow dlsym()s in a plugin, in the order it looks.
inline constexpr const char* kEntryPoints[] = {
    "SE_InitPlugin", "TF_InitKernel", "TF_InitGraph", "TF_InitProfiler", "TFNPD_InitPlugin",
    "GetPjrtApi",
};
bool IsEntryPoint(const std::string& name);
// "SE_InitPlugin, TF_InitKernel, ..., GetPjrtApi"
std::string EntryPointList();

// Optimal string alignment distance (edits: insert, delete, substitute,
// swap two neighbours).
int EditDistance(const std::string& a, const std::string& b);
// Does `name` look like a misspelling of `entry`? Differs only in case, is
// within edit distance 2 (ignoring case), or is `entry` with up to 8
// characters added. `*score` (lower is closer) ranks competing entries.
bool IsNearMiss(const std::string& name, const std::string& entry, int* score);

// The demangled C++ name, or `name` itself if it is not a valid mangling.
std::string Demangle(const std::string& name);
// For a C++-mangled name (_Z...) of a function named like an entry point
// (in any namespace), that entry point; else "".
std::string MangledEntryPoint(const std::string& name);
// For a C++-mangled name in TensorFlow's C++ internals (length-prefixed
// 10tensorflow, 3tsl, 4absl, 6google8protobuf, 3xla), the outermost such
// namespace ("tensorflow::"); else "".
std::string InternalsNamespace(const std::string& name);

}  // namespace tfp_validator

#endif  // TFPLUGIN_VALIDATE_SYMBOL_NAMES_H_
