// SPDX-License-Identifier: Apache-2.0
#include "elf_file.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace tfp_validator {
namespace {

#ifndef EM_LOONGARCH
#define EM_LOONGARCH 258
#endif

struct Fd {
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int fd;
};

struct ElfHandle {
  explicit ElfHandle(Elf* e) : elf(e) {}
  ~ElfHandle() {
    if (elf != nullptr) elf_end(elf);
  }
  ElfHandle(const ElfHandle&) = delete;
  ElfHandle& operator=(const ElfHandle&) = delete;
  Elf* elf;
};

// Reads exactly `size` bytes at `offset`; false on a short read or error.
bool ReadAt(int fd, uint64_t offset, void* buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(fd, static_cast<char*>(buf) + done, size - done,
                      static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

ElfSymbol MakeSymbol(const char* name, unsigned char info, unsigned char other, unsigned shndx) {
  return ElfSymbol{name != nullptr ? name : "", shndx != SHN_UNDEF,
                   static_cast<unsigned char>(ELF64_ST_TYPE(info)),
                   static_cast<unsigned char>(ELF64_ST_BIND(info)),
                   static_cast<unsigned char>(ELF64_ST_VISIBILITY(other))};
}

// The dynamic symbols through the dynamic segment, for files without
// section headers (sstrip'ed): DT_SYMTAB/DT_STRTAB, counted with DT_HASH or
// DT_GNU_HASH. The file has this machine's class and byte order. Sets
// `error` only if the program headers cannot be read; without a usable
// dynamic segment, has_dynamic stays false.
void ReadDynamicSegment(int fd, uint64_t file_size, SymbolTables& out) {
  ElfW(Ehdr) ehdr;
  if (!ReadAt(fd, 0, &ehdr, sizeof ehdr) || ehdr.e_phentsize != sizeof(ElfW(Phdr)) ||
      ehdr.e_phoff > file_size || ehdr.e_phnum > (file_size - ehdr.e_phoff) / sizeof(ElfW(Phdr))) {
    out.error = "the program header table cannot be read";
    return;
  }
  std::vector<ElfW(Phdr)> phdrs(ehdr.e_phnum);
  if (!phdrs.empty() && !ReadAt(fd, ehdr.e_phoff, phdrs.data(), phdrs.size() * sizeof(ElfW(Phdr)))) {
    out.error = "the program header table cannot be read";
    return;
  }
  const ElfW(Phdr)* dynamic = nullptr;
  for (const auto& ph : phdrs) {
    if (ph.p_type == PT_DYNAMIC) dynamic = &ph;
  }
  if (dynamic == nullptr || dynamic->p_offset > file_size ||
      dynamic->p_filesz > file_size - dynamic->p_offset) {
    return;  // has_dynamic stays false
  }
  std::vector<ElfW(Dyn)> dyns(dynamic->p_filesz / sizeof(ElfW(Dyn)));
  if (!dyns.empty() && !ReadAt(fd, dynamic->p_offset, dyns.data(), dyns.size() * sizeof(ElfW(Dyn)))) {
    return;
  }
  uint64_t symtab = 0, strtab = 0, strsz = 0, hash = 0, gnu_hash = 0;
  for (const auto& d : dyns) {
    if (d.d_tag == DT_NULL) break;
    switch (d.d_tag) {
      case DT_SYMTAB: symtab = d.d_un.d_ptr; break;
      case DT_STRTAB: strtab = d.d_un.d_ptr; break;
      case DT_STRSZ: strsz = d.d_un.d_val; break;
      case DT_HASH: hash = d.d_un.d_ptr; break;
      case DT_GNU_HASH: gnu_hash = d.d_un.d_ptr; break;
      default: break;
    }
  }
  // Virtual address -> file offset through the PT_LOAD segments; 0 if none.
  auto to_offset = [&](uint64_t addr, uint64_t* offset) {
    for (const auto& ph : phdrs) {
      if (ph.p_type == PT_LOAD && addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_filesz) {
        *offset = ph.p_offset + (addr - ph.p_vaddr);
        return *offset < file_size;
      }
    }
    return false;
  };
  uint64_t sym_off = 0, str_off = 0;
  if (symtab == 0 || strtab == 0 || !to_offset(symtab, &sym_off) || !to_offset(strtab, &str_off)) {
    return;
  }
  uint64_t max_count = (file_size - sym_off) / sizeof(ElfW(Sym));
  uint64_t count = 0;
  uint64_t off = 0;
  if (hash != 0 && to_offset(hash, &off)) {
    uint32_t words[2];
    if (ReadAt(fd, off, words, sizeof words)) count = words[1];  // nchain
  } else if (gnu_hash != 0 && to_offset(gnu_hash, &off)) {
    uint32_t head[4];  // nbuckets, symoffset, bloom_size, bloom_shift
    if (ReadAt(fd, off, head, sizeof head) && head[0] < (1u << 24) && head[2] < (1u << 24)) {
      std::vector<uint32_t> buckets(head[0]);
      uint64_t buckets_off = off + sizeof head + uint64_t{head[2]} * sizeof(ElfW(Addr));
      if (buckets.empty() || ReadAt(fd, buckets_off, buckets.data(), buckets.size() * 4)) {
        uint32_t last = 0;
        for (uint32_t b : buckets) last = std::max(last, b);
        if (last < head[1]) {
          count = head[1];
        } else {
          uint64_t chain_off = buckets_off + buckets.size() * 4;
          uint32_t index = last, value = 0;
          while (index < max_count && ReadAt(fd, chain_off + uint64_t{index - head[1]} * 4, &value, 4)) {
            ++index;
            if (value & 1) break;
          }
          count = index;
        }
      }
    }
  } else if (str_off > sym_off) {
    count = (str_off - sym_off) / sizeof(ElfW(Sym));  // the usual layout: .dynsym, then .dynstr
  }
  count = std::min(count, max_count);
  strsz = std::min(strsz, file_size - str_off);
  std::vector<char> strings(strsz + 1, '\0');
  std::vector<ElfW(Sym)> syms(count);
  if ((strsz != 0 && !ReadAt(fd, str_off, strings.data(), strsz)) ||
      (count != 0 && !ReadAt(fd, sym_off, syms.data(), count * sizeof(ElfW(Sym))))) {
    return;
  }
  out.has_dynamic = true;
  out.dynamic_source = "PT_DYNAMIC (no section headers)";
  for (uint64_t i = 1; i < count; ++i) {
    const ElfW(Sym)& s = syms[i];
    const char* name = s.st_name < strsz ? strings.data() + s.st_name : "";
    out.dynamic.push_back(MakeSymbol(name, s.st_info, s.st_other, s.st_shndx));
  }
}

}  // namespace

NativeElf Native() {
  NativeElf n{sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32,
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
              ELFDATA2MSB,
#else
              ELFDATA2LSB,
#endif
              EM_NONE};
#if defined(__x86_64__)
  n.machine = EM_X86_64;
#elif defined(__aarch64__)
  n.machine = EM_AARCH64;
#elif defined(__i386__)
  n.machine = EM_386;
#elif defined(__arm__)
  n.machine = EM_ARM;
#elif defined(__powerpc64__)
  n.machine = EM_PPC64;
#elif defined(__s390x__)
  n.machine = EM_S390;
#elif defined(__riscv)
  n.machine = EM_RISCV;
#elif defined(__loongarch__)
  n.machine = EM_LOONGARCH;
#else
  // Whatever this executable was built for.
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ElfW(Ehdr) ehdr;
    if (ReadAt(fd, 0, &ehdr, sizeof ehdr)) n.machine = ehdr.e_machine;
    close(fd);
  }
#endif
  return n;
}

std::string MachineName(unsigned machine) {
  switch (machine) {
    case EM_NONE: return "no machine (EM_NONE)";
    case EM_386: return "Intel 80386";
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_PPC: return "PowerPC";
    case EM_PPC64: return "PowerPC64";
    case EM_S390: return "IBM S/390";
    case EM_RISCV: return "RISC-V";
    case EM_MIPS: return "MIPS";
    case EM_SPARC: return "SPARC";
    case EM_SPARCV9: return "SPARC V9";
    case EM_IA_64: return "IA-64";
    case EM_LOONGARCH: return "LoongArch";
    case 190: return "NVIDIA CUDA";  // EM_CUDA
    case 224: return "AMD GPU";      // EM_AMDGPU
    case 247: return "Linux BPF";    // EM_BPF
    default: return "machine " + std::to_string(machine);
  }
}

std::string DescribeTarget(unsigned char elf_class, unsigned char data, unsigned machine) {
  std::string out = elf_class == ELFCLASS64 ? "ELF64 (64-bit)"
                    : elf_class == ELFCLASS32 ? "ELF32 (32-bit)"
                                              : "ELF class " + std::to_string(elf_class);
  out += data == ELFDATA2LSB ? " little-endian " : data == ELFDATA2MSB ? " big-endian " : " ";
  out += MachineName(machine) + " (e_machine " + std::to_string(machine) + ")";
  return out;
}

std::string SymbolTypeName(unsigned char type) {
  switch (type) {
    case STT_NOTYPE: return "an untyped symbol (STT_NOTYPE)";
    case STT_OBJECT: return "a variable (STT_OBJECT)";
    case STT_FUNC: return "a function (STT_FUNC)";
    case STT_SECTION: return "a section symbol (STT_SECTION)";
    case STT_FILE: return "a file symbol (STT_FILE)";
    case STT_COMMON: return "a common block (STT_COMMON)";
    case STT_TLS: return "a thread-local variable (STT_TLS)";
    case STT_GNU_IFUNC: return "an indirect function (STT_GNU_IFUNC)";
    default: return "symbol type " + std::to_string(type);
  }
}

SymbolTables ReadSymbols(const std::string& path) {
  SymbolTables out;
  if (elf_version(EV_CURRENT) == EV_NONE) {
    out.error = std::string("libelf: ") + elf_errmsg(-1);
    return out;
  }
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  struct stat st;
  if (fd.fd < 0 || fstat(fd.fd, &st) != 0) {
    out.error = std::string("open: ") + std::strerror(errno);
    return out;
  }
  ElfHandle elf(elf_begin(fd.fd, ELF_C_READ, nullptr));
  if (elf.elf == nullptr || elf_kind(elf.elf) != ELF_K_ELF) {
    out.error = std::string("libelf: ") + elf_errmsg(-1);
    return out;
  }
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf.elf, &ehdr) == nullptr) {
    out.error = std::string("libelf: ") + elf_errmsg(-1);
    return out;
  }
  const NativeElf native = Native();
  if (ehdr.e_ident[EI_CLASS] != native.elf_class || ehdr.e_ident[EI_DATA] != native.data) {
    out.error = "not this machine's ELF class and byte order";
    return out;
  }
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf.elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    if (shdr.sh_type != SHT_DYNSYM && shdr.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || shdr.sh_entsize == 0) continue;
    const bool dynamic = shdr.sh_type == SHT_DYNSYM;
    if (dynamic) {
      out.has_dynamic = true;
      out.dynamic_source = ".dynsym";
    }
    const size_t count = std::min<uint64_t>(shdr.sh_size / shdr.sh_entsize,
                                            data->d_size / shdr.sh_entsize);
    for (size_t i = 1; i < count; ++i) {  // 0 is the null symbol
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
      unsigned char type = GELF_ST_TYPE(sym.st_info);
      if (type == STT_SECTION || type == STT_FILE) continue;
      const char* name = elf_strptr(elf.elf, shdr.sh_link, sym.st_name);
      (dynamic ? out.dynamic : out.statics)
          .push_back(MakeSymbol(name, sym.st_info, sym.st_other, sym.st_shndx));
    }
  }
  if (!out.has_dynamic) {
    ReadDynamicSegment(fd.fd, static_cast<uint64_t>(st.st_size), out);
    if (!out.error.empty()) return out;
  }
  out.ok = true;
  return out;
}

}  // namespace tfp_validator
