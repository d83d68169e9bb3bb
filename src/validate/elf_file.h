// SPDX-License-Identifier: Apache-2.0
// What the validator reads from an ELF file: this machine's ELF identity,
// names for ELF values, and the symbol tables (through libelf).
#ifndef TFPLUGIN_VALIDATE_ELF_FILE_H_
#define TFPLUGIN_VALIDATE_ELF_FILE_H_

#include <string>
#include <vector>

namespace tfp_validator {

// The class, byte order and machine this validator (and so TensorFlow on
// this machine) runs as: ELFCLASS64, ELFDATA2LSB, EM_X86_64 on x86-64.
struct NativeElf {
  unsigned char elf_class;
  unsigned char data;
  unsigned machine;
};
NativeElf Native();

// "x86-64", "AArch64", ... or "machine 1234".
std::string MachineName(unsigned machine);
// "ELF64 little-endian x86-64 (e_machine 62)".
std::string DescribeTarget(unsigned char elf_class, unsigned char data, unsigned machine);
// "a variable (STT_OBJECT)", "a function (STT_FUNC)", ...
std::string SymbolTypeName(unsigned char type);

struct ElfSymbol {
  std::string name;
  bool defined;               // st_shndx != SHN_UNDEF
  unsigned char type;         // STT_*
  unsigned char bind;         // STB_*
  unsigned char visibility;   // STV_*
};

struct SymbolTables {
  bool ok = false;
  std::string error;          // when !ok: why nothing could be read
  bool has_dynamic = false;   // a dynamic symbol table was found
  std::string dynamic_source; // ".dynsym" or "PT_DYNAMIC (no section headers)"
  std::vector<ElfSymbol> dynamic;
  std::vector<ElfSymbol> statics;  // .symtab; empty when stripped
};

// Reads the dynamic symbols (.dynsym, or through PT_DYNAMIC when there are
// no section headers) and the static ones (.symtab) of a native-class ELF
// file. Never throws; errors come back in `error`.
SymbolTables ReadSymbols(const std::string& path);

}  // namespace tfp_validator

#endif  // TFPLUGIN_VALIDATE_ELF_FILE_H_
