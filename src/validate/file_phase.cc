// SPDX-License-Identifier: Apache-2.0
// Phase 1, the file: is this something TensorFlow's dlopen() can load on
// this machine? Read by hand (pread, <elf.h>): the checks run before any
// structure is trusted, and stop at the first problem.
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "elf_file.h"
#include "phases.h"

namespace tfp_validator {
namespace {

using Ehdr = ElfW(Ehdr);
using Phdr = ElfW(Phdr);
using Shdr = ElfW(Shdr);
using Dyn = ElfW(Dyn);

struct Fd {
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int fd;
};

// Reads up to `size` bytes at `offset`; the count read, or -1 (errno set).
ssize_t ReadUpTo(int fd, uint64_t offset, void* buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(fd, static_cast<char*>(buf) + done, size - done,
                      static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

std::string Hex(const unsigned char* bytes, size_t n) {
  std::string out;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, i == 0 ? "%02x" : " %02x", bytes[i]);
    out += buf;
  }
  return out;
}

bool StartsWith(const unsigned char* head, size_t n, const char* prefix) {
  size_t len = std::strlen(prefix);
  return n >= len && std::memcmp(head, prefix, len) == 0;
}

// What a non-ELF file looks like, from its first bytes.
std::string GuessKind(const unsigned char* head, size_t n) {
  if (StartsWith(head, n, "version https://git-lfs")) return "a Git LFS pointer (text)";
  if (StartsWith(head, n, "/* GNU ld script") || StartsWith(head, n, "GROUP") ||
      StartsWith(head, n, "INPUT")) {
    return "a linker script (text)";
  }
  if (StartsWith(head, n, "#!")) return "a script (text)";
  if (StartsWith(head, n, "MZ")) return "a Windows PE file (DLL or EXE)";
  if (n >= 4) {
    uint32_t magic;
    std::memcpy(&magic, head, 4);
    if (magic == 0xfeedfacfu || magic == 0xcffaedfeu || magic == 0xfeedfaceu ||
        magic == 0xcefaedfeu || magic == 0xcafebabeu || magic == 0xbebafecau) {
      return "a Mach-O (macOS) binary";
    }
  }
  if (StartsWith(head, n, "\x1f\x8b")) return "gzip-compressed data";
  if (StartsWith(head, n, "PK\x03\x04")) return "a zip archive (a wheel or jar?)";
  if (StartsWith(head, n, "\x28\xb5\x2f\xfd")) return "zstd-compressed data";
  if (StartsWith(head, n, "\xfd" "7zXZ")) return "xz-compressed data";
  bool text = true;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = head[i];
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f') text = false;
    if (c == 0x7f) text = false;
  }
  return text ? "a text file" : "unknown data";
}

const char* FileTypeName(mode_t mode) {
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISFIFO(mode)) return "FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "socket";
  return "special file";
}

std::string TypeName(unsigned type) {
  switch (type) {
    case ET_NONE: return "ET_NONE (no file type)";
    case ET_REL: return "ET_REL (a relocatable object file, .o)";
    case ET_EXEC: return "ET_EXEC (an executable)";
    case ET_CORE: return "ET_CORE (a core dump)";
    default: return "ELF type " + std::to_string(type);
  }
}

// a + b * c, false on overflow.
bool End(uint64_t a, uint64_t b, uint64_t c, uint64_t* out) {
  uint64_t product;
  return !__builtin_mul_overflow(b, c, &product) && !__builtin_add_overflow(a, product, out);
}

// The largest extent past the end of the file, if any.
struct Overrun {
  uint64_t end = 0;
  std::string what;
  void Note(uint64_t e, std::string w, uint64_t size) {
    if (e > size && e > end) {
      end = e;
      what = std::move(w);
    }
  }
};

void Truncated(FindingSink& sink, uint64_t want, uint64_t size,
               const std::string& detail) {
  sink.Add(Finding(RuleId::kFileTruncated)
               .Set("detail", detail)
               .Set("want", std::to_string(want))
               .Set("got", std::to_string(size)));
}

void BadHeader(FindingSink& sink, const std::string& detail, const std::string& want,
               const std::string& got) {
  sink.Add(Finding(RuleId::kFileBadHeader).Set("detail", detail).Set("want", want).Set("got", got));
}

// The ELF checks, on a file with the ELF magic; stops at the first finding.
void CheckElf(int fd, uint64_t size, FindingSink& sink) {
  unsigned char ident[EI_NIDENT] = {};
  ssize_t got = ReadUpTo(fd, 0, ident, sizeof ident);
  if (got < 0) {
    sink.Add(Finding(RuleId::kFileUnreadable).Set("reason", std::string("read: ") + std::strerror(errno)));
    return;
  }
  if (static_cast<size_t>(got) < EI_NIDENT) {
    Truncated(sink, EI_NIDENT, size, "the file ends inside the ELF identification (16 bytes)");
    return;
  }
  const unsigned char cls = ident[EI_CLASS], data = ident[EI_DATA];
  if (cls != ELFCLASS32 && cls != ELFCLASS64) {
    BadHeader(sink, "EI_CLASS is " + std::to_string(cls), "EI_CLASS 1 (ELF32) or 2 (ELF64)",
              std::to_string(cls));
    return;
  }
  if (data != ELFDATA2LSB && data != ELFDATA2MSB) {
    BadHeader(sink, "EI_DATA is " + std::to_string(data),
              "EI_DATA 1 (little-endian) or 2 (big-endian)", std::to_string(data));
    return;
  }
  if (ident[EI_VERSION] != EV_CURRENT) {
    BadHeader(sink, "EI_VERSION is " + std::to_string(ident[EI_VERSION]), "EI_VERSION 1",
              std::to_string(ident[EI_VERSION]));
    return;
  }
  const NativeElf native = Native();
  if (cls != native.elf_class || data != native.data) {
    unsigned char m[2] = {};
    unsigned machine = 0;
    if (ReadUpTo(fd, 18, m, 2) == 2) {  // e_machine: same offset in both classes
      machine = data == ELFDATA2LSB ? m[0] | m[1] << 8 : m[1] | m[0] << 8;
    }
    sink.Add(Finding(RuleId::kFileWrongClass)
                 .Set("want", DescribeTarget(native.elf_class, native.data, native.machine))
                 .Set("got", DescribeTarget(cls, data, machine)));
    return;
  }
  Ehdr ehdr;
  if (size < sizeof ehdr || ReadUpTo(fd, 0, &ehdr, sizeof ehdr) != sizeof ehdr) {
    Truncated(sink, sizeof ehdr, size, "the file ends inside the ELF header");
    return;
  }
  if (ehdr.e_machine != native.machine) {
    sink.Add(Finding(RuleId::kFileWrongArch)
                 .Set("want", DescribeTarget(native.elf_class, native.data, native.machine))
                 .Set("got", DescribeTarget(cls, data, ehdr.e_machine)));
    return;
  }
  if (ehdr.e_version != EV_CURRENT) {
    BadHeader(sink, "e_version is " + std::to_string(ehdr.e_version), "e_version 1",
              std::to_string(ehdr.e_version));
    return;
  }
  if (ehdr.e_ehsize != sizeof(Ehdr)) {
    BadHeader(sink, "e_ehsize is " + std::to_string(ehdr.e_ehsize),
              "e_ehsize " + std::to_string(sizeof(Ehdr)), std::to_string(ehdr.e_ehsize));
    return;
  }
  if (ehdr.e_phnum != 0 && ehdr.e_phentsize != sizeof(Phdr)) {
    BadHeader(sink, "e_phentsize is " + std::to_string(ehdr.e_phentsize),
              "e_phentsize " + std::to_string(sizeof(Phdr)), std::to_string(ehdr.e_phentsize));
    return;
  }
  if (ehdr.e_shnum != 0 && ehdr.e_shentsize != sizeof(Shdr)) {
    BadHeader(sink, "e_shentsize is " + std::to_string(ehdr.e_shentsize),
              "e_shentsize " + std::to_string(sizeof(Shdr)), std::to_string(ehdr.e_shentsize));
    return;
  }
  if (ehdr.e_type != ET_DYN) {
    sink.Add(Finding(RuleId::kFileNotShared).Set("kind", TypeName(ehdr.e_type)));
    return;
  }

  // The header tables, and everything they point at, inside the file.
  Overrun over;
  uint64_t shnum = ehdr.e_shnum, phnum = ehdr.e_phnum;
  Shdr first{};
  if (ehdr.e_shoff != 0 && (ehdr.e_shnum == 0 || ehdr.e_phnum == PN_XNUM)) {
    // Extended numbering: the counts live in section header 0.
    if (ehdr.e_shoff > size || size - ehdr.e_shoff < sizeof first ||
        ReadUpTo(fd, ehdr.e_shoff, &first, sizeof first) != sizeof first) {
      Truncated(sink, ehdr.e_shoff + sizeof first, size,
                "section header 0 (extended numbering) is past the end of the file");
      return;
    }
    if (ehdr.e_shnum == 0) shnum = first.sh_size;
    if (ehdr.e_phnum == PN_XNUM) phnum = first.sh_info;
  }
  uint64_t ph_end = 0, sh_end = 0;
  if (phnum != 0) {
    if (!End(ehdr.e_phoff, phnum, sizeof(Phdr), &ph_end)) ph_end = UINT64_MAX;
    over.Note(ph_end, "the program header table (" + std::to_string(phnum) + " entries at offset " +
                          std::to_string(ehdr.e_phoff) + ") ends past the end of the file", size);
  }
  if (shnum != 0 && ehdr.e_shoff != 0) {
    if (!End(ehdr.e_shoff, shnum, sizeof(Shdr), &sh_end)) sh_end = UINT64_MAX;
    over.Note(sh_end, "the section header table (" + std::to_string(shnum) + " entries at offset " +
                          std::to_string(ehdr.e_shoff) + ") ends past the end of the file", size);
  }
  std::vector<Phdr> phdrs;
  if (phnum != 0 && ph_end <= size) {
    phdrs.resize(phnum);
    if (ReadUpTo(fd, ehdr.e_phoff, phdrs.data(), phnum * sizeof(Phdr)) !=
        static_cast<ssize_t>(phnum * sizeof(Phdr))) {
      phdrs.clear();
    }
    for (size_t i = 0; i < phdrs.size(); ++i) {
      const Phdr& ph = phdrs[i];
      uint64_t end;
      if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC) continue;
      if (!End(ph.p_offset, 1, ph.p_filesz, &end)) end = UINT64_MAX;
      over.Note(end, std::string("segment ") + std::to_string(i) +
                         (ph.p_type == PT_LOAD ? " (PT_LOAD" : " (PT_DYNAMIC") + ", file bytes " +
                         std::to_string(ph.p_offset) + "-" + std::to_string(end) +
                         ") ends past the end of the file", size);
    }
  }
  if (shnum != 0 && ehdr.e_shoff != 0 && sh_end <= size) {
    std::vector<Shdr> shdrs(shnum);
    if (ReadUpTo(fd, ehdr.e_shoff, shdrs.data(), shnum * sizeof(Shdr)) ==
        static_cast<ssize_t>(shnum * sizeof(Shdr))) {
      // Section names, if the name table itself is intact.
      std::vector<char> names;
      uint64_t shstrndx = ehdr.e_shstrndx == SHN_XINDEX ? first.sh_link : ehdr.e_shstrndx;
      if (shstrndx < shnum) {
        const Shdr& s = shdrs[shstrndx];
        uint64_t end;
        if (s.sh_type != SHT_NOBITS && End(s.sh_offset, 1, s.sh_size, &end) && end <= size &&
            s.sh_size < (64u << 20)) {
          names.resize(s.sh_size + 1, '\0');
          if (ReadUpTo(fd, s.sh_offset, names.data(), s.sh_size) != static_cast<ssize_t>(s.sh_size)) {
            names.clear();
          }
        }
      }
      for (size_t i = 0; i < shdrs.size(); ++i) {
        const Shdr& s = shdrs[i];
        uint64_t end;
        if (s.sh_type == SHT_NOBITS || s.sh_type == SHT_NULL) continue;
        if (!End(s.sh_offset, 1, s.sh_size, &end)) end = UINT64_MAX;
        std::string name = s.sh_name < names.size() ? std::string(names.data() + s.sh_name) : "";
        over.Note(end, "section " + (name.empty() ? std::to_string(i) : name) + " (bytes " +
                           std::to_string(s.sh_offset) + "-" + std::to_string(end) +
                           ") ends past the end of the file", size);
      }
    }
  }
  if (over.end != 0) {
    Truncated(sink, over.end, size, over.what);
    return;
  }

  // ET_DYN, but a position-independent executable? (glibc refuses to dlopen those.)
  for (const Phdr& ph : phdrs) {
    if (ph.p_type != PT_DYNAMIC) continue;
    std::vector<Dyn> dyns(ph.p_filesz / sizeof(Dyn));
    if (dyns.empty() || ReadUpTo(fd, ph.p_offset, dyns.data(), dyns.size() * sizeof(Dyn)) !=
                            static_cast<ssize_t>(dyns.size() * sizeof(Dyn))) {
      continue;
    }
    for (const Dyn& d : dyns) {
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_PIE)) {
        sink.Add(Finding(RuleId::kFileNotShared)
                     .Set("kind", "a position-independent executable (ET_DYN with DF_1_PIE)"));
        return;
      }
    }
  }
}

}  // namespace

void RunFilePhase(const PhaseContext& c, FindingSink& sink) {
  struct stat st;
  if (stat(c.path.c_str(), &st) != 0) {
    int err = errno;
    std::string reason = std::string("stat: ") + std::strerror(err);
    sink.Add(Finding(err == ENOENT || err == ENOTDIR ? RuleId::kFileMissing : RuleId::kFileUnreadable)
                 .Set("reason", reason));
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    sink.Add(Finding(RuleId::kFileDirectory));
    return;
  }
  if (!S_ISREG(st.st_mode)) {  // never opened: a FIFO would block
    sink.Add(Finding(RuleId::kFileSpecial).Set("kind", FileTypeName(st.st_mode)));
    return;
  }
  Fd fd(open(c.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.fd < 0) {
    sink.Add(Finding(RuleId::kFileUnreadable).Set("reason", std::string("open: ") + std::strerror(errno)));
    return;
  }
  struct stat fst;
  if (fstat(fd.fd, &fst) != 0 || !S_ISREG(fst.st_mode)) {  // replaced since stat()
    sink.Add(Finding(RuleId::kFileUnreadable).Set("reason", "the file changed while being checked"));
    return;
  }
  const uint64_t size = static_cast<uint64_t>(fst.st_size);
  if (size == 0) {
    sink.Add(Finding(RuleId::kFileEmpty));
    return;
  }
  unsigned char head[64] = {};
  ssize_t n = ReadUpTo(fd.fd, 0, head, sizeof head);
  if (n < 0) {
    sink.Add(Finding(RuleId::kFileUnreadable).Set("reason", std::string("read: ") + std::strerror(errno)));
    return;
  }
  const size_t got = static_cast<size_t>(n);
  if (StartsWith(head, got, "!<arch>\n")) {
    sink.Add(Finding(RuleId::kFileStaticArchive).Set("kind", "static archive (ar, \"!<arch>\")"));
    return;
  }
  if (StartsWith(head, got, "!<thin>\n")) {
    sink.Add(Finding(RuleId::kFileStaticArchive).Set("kind", "thin static archive (ar, \"!<thin>\")"));
    return;
  }
  if (got < SELFMAG && std::memcmp(head, ELFMAG, got) == 0) {
    Truncated(sink, SELFMAG, size, "the file ends inside the ELF magic");
    return;
  }
  if (std::memcmp(head, ELFMAG, SELFMAG) != 0) {
    sink.Add(Finding(RuleId::kFileNotElf)
                 .Set("kind", GuessKind(head, got))
                 .Set("bytes", Hex(head, got < 8 ? got : 8)));
    return;
  }
  CheckElf(fd.fd, size, sink);
}

}  // namespace tfp_validator
