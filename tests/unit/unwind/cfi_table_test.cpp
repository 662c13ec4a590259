// The rows cfi_table.cpp compiles from real binaries' .eh_frame, checked
// address by address against libdw's own CFI interpreter: the CFA rule,
// where rbp was saved, and where the return address is.
#include "runtime/unwind/cfi_table.h"

#include <cstdlib>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <link.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace ubtrace::runtime::unwind {
namespace {

struct ElfHandle {
  int fd = -1;
  Elf *elf = nullptr;
  explicit ElfHandle(const std::string &path) {
    elf_version(EV_CURRENT);
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
      elf = elf_begin(fd, ELF_C_READ, nullptr);
  }
  ~ElfHandle() {
    if (elf)
      elf_end(elf);
    if (fd >= 0)
      ::close(fd);
  }
  // A section's bytes and address, if the file has it.
  bool section(const char *name, CfiSection &out) {
    size_t shstrndx = 0;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
      return false;
    for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
        continue;
      const char *n = elf_strptr(elf, shstrndx, sh.sh_name);
      if (!n || std::string(n) != name)
        continue;
      Elf_Data *d = elf_rawdata(scn, nullptr);
      if (!d)
        return false;
      out.data = static_cast<const uint8_t *>(d->d_buf);
      out.size = d->d_size;
      out.vaddr = sh.sh_addr;
      return true;
    }
    return false;
  }
};

// libdw's rule for a register: offset from the CFA, same value, undefined
// or something else.
enum class Rule { Same, Undefined, Offset, Other };
Rule register_rule(Dwarf_Frame *frame, int reg, int64_t &offset) {
  Dwarf_Op mem[3];
  Dwarf_Op *ops = nullptr;
  size_t nops = 0;
  if (dwarf_frame_register(frame, reg, mem, &ops, &nops) != 0)
    return Rule::Other;
  if (nops == 0)
    return ops == nullptr ? Rule::Same : Rule::Undefined;
  if (ops[0].atom != DW_OP_call_frame_cfa)
    return Rule::Other;
  if (nops == 1) {
    offset = 0;
    return Rule::Offset;
  }
  if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
    offset = static_cast<int64_t>(ops[1].number);
    return Rule::Offset;
  }
  if (nops == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus) {
    offset = static_cast<int64_t>(ops[1].number);
    return Rule::Offset;
  }
  return Rule::Other;
}

// Our row at `addr` says what libdw says there (or, for an Unsupported
// row, libdw's rule is one a row cannot hold).
void expect_agrees(Dwarf_CFI *cfi, const CfiTable &table, uint64_t addr,
                   size_t &checked, const std::string &what) {
  const CfiRow *row = find_cfi_row(table.rows.data(), table.rows.size(), addr);
  Dwarf_Frame *frame = nullptr;
  if (dwarf_cfi_addrframe(cfi, addr, &frame) != 0) {
    EXPECT_TRUE(row == nullptr || row->cfa == CfaRule::Unsupported)
        << what << " 0x" << std::hex << addr << ": libdw has no FDE, we have "
        << describe(*row);
    return;
  }
  ASSERT_NE(row, nullptr) << what << " 0x" << std::hex << addr;
  bool signal = false;
  dwarf_frame_info(frame, nullptr, nullptr, &signal);
  Dwarf_Op *cfa_ops = nullptr;
  size_t cfa_nops = 0;
  dwarf_frame_cfa(frame, &cfa_ops, &cfa_nops);
  int cfa_reg = -1;
  int64_t cfa_off = 0;
  if (cfa_nops == 1 && cfa_ops[0].atom == DW_OP_bregx) {
    cfa_reg = static_cast<int>(cfa_ops[0].number);
    cfa_off = static_cast<int64_t>(cfa_ops[0].number2);
  } else if (cfa_nops == 1 && cfa_ops[0].atom >= DW_OP_breg0 &&
             cfa_ops[0].atom <= DW_OP_breg31) {
    cfa_reg = cfa_ops[0].atom - DW_OP_breg0;
    cfa_off = static_cast<int64_t>(cfa_ops[0].number);
  }
  int64_t rbp_off = 0, ra_off = 0;
  Rule rbp = register_rule(frame, 6, rbp_off);
  Rule ra = register_rule(frame, 16, ra_off);
  std::free(frame);
  checked++;
  if (ra == Rule::Undefined) {
    EXPECT_EQ(row->cfa, CfaRule::End) << what << " 0x" << std::hex << addr;
    return;
  }
  bool simple = !signal && (cfa_reg == 6 || cfa_reg == 7) &&
                ra == Rule::Offset && ra_off == -8 &&
                (rbp == Rule::Same || rbp == Rule::Offset);
  if (!simple) {
    EXPECT_EQ(row->cfa, CfaRule::Unsupported)
        << what << " 0x" << std::hex << addr << ": " << describe(*row);
    return;
  }
  EXPECT_EQ(row->cfa, cfa_reg == 7 ? CfaRule::Rsp : CfaRule::Rbp)
      << what << " 0x" << std::hex << addr << ": " << describe(*row);
  EXPECT_EQ(row->cfa_offset, cfa_off) << what << " 0x" << std::hex << addr;
  if (rbp == Rule::Offset) {
    EXPECT_EQ(row->rbp, RbpRule::Offset) << what << " 0x" << std::hex << addr;
    EXPECT_EQ(row->rbp_offset, rbp_off) << what << " 0x" << std::hex << addr;
  } else {
    EXPECT_EQ(row->rbp, RbpRule::Same) << what << " 0x" << std::hex << addr;
  }
}

// Every row's first and last address, and the middle of long ones.
size_t check_file(const std::string &path) {
  ElfHandle file(path);
  if (!file.elf)
    return 0;
  CfiSection eh;
  if (!file.section(".eh_frame", eh))
    return 0;
  CfiTable table;
  add_cfi_rows(eh, table);
  finish_cfi_table(table);
  EXPECT_EQ(table.bad_entries, 0u) << path;
  EXPECT_GT(table.fdes, 0u) << path;
  Dwarf_CFI *cfi = dwarf_getcfi_elf(file.elf);
  EXPECT_NE(cfi, nullptr) << path;
  if (!cfi)
    return 0;
  size_t checked = 0;
  const auto &rows = table.rows;
  for (size_t i = 0; i + 1 < rows.size(); i++) {
    uint64_t a = rows[i].start, b = rows[i + 1].start;
    for (uint64_t addr : {a, a + (b - a) / 2, b - 1})
      expect_agrees(cfi, table, addr, checked, path);
    if (::testing::Test::HasFailure())
      break; // one bad row says enough
  }
  dwarf_cfi_end(cfi);
  return checked;
}

std::string libc_path() {
  std::string out;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *p) {
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("/libc.so") != std::string::npos)
          *static_cast<std::string *>(p) = name;
        return 0;
      },
      &out);
  return out;
}

TEST(CfiTable, LibcAgreesWithLibdw) {
  std::string libc = libc_path();
  ASSERT_FALSE(libc.empty());
  EXPECT_GT(check_file(libc), 5000u);
}

TEST(CfiTable, DistroProgramAgreesWithLibdw) {
  EXPECT_GT(check_file("/usr/bin/ls"), 500u);
}

TEST(CfiTable, ThisTestAgreesWithLibdw) {
  EXPECT_GT(check_file("/proc/self/exe"), 1000u);
}

TEST(CfiTable, OptimisedProgramWithoutFramePointersAgreesWithLibdw) {
  const char *build = std::getenv("UBTRACE_BUILD_DIR");
  if (!build)
    GTEST_SKIP() << "UBTRACE_BUILD_DIR is not set (run through ctest)";
  EXPECT_GT(check_file(std::string(build) + "/tests/testprogs/dwarf_args"),
            20u);
}

// A truncated or scribbled .eh_frame gives fewer rows, never a read past
// its end (run under ASan in the sanitizer build).
TEST(CfiTable, DamagedSectionsAreReadWithinBounds) {
  ElfHandle file(libc_path());
  CfiSection eh;
  ASSERT_TRUE(file.section(".eh_frame", eh));
  std::vector<uint8_t> copy(eh.data, eh.data + eh.size);
  for (size_t cut : {size_t(3), size_t(17), copy.size() / 3, copy.size() - 5}) {
    std::vector<uint8_t> part(copy.begin(), copy.begin() + cut);
    CfiTable t;
    add_cfi_rows({part.data(), part.size(), eh.vaddr, false}, t);
    finish_cfi_table(t);
  }
  uint32_t seed = 12345;
  for (int round = 0; round < 50; round++) {
    std::vector<uint8_t> bad = copy;
    for (int k = 0; k < 64; k++) {
      seed = seed * 1103515245u + 12345u;
      bad[seed % bad.size()] = static_cast<uint8_t>(seed >> 16);
    }
    CfiTable t;
    add_cfi_rows({bad.data(), bad.size(), eh.vaddr, false}, t);
    finish_cfi_table(t);
    for (size_t i = 1; i < t.rows.size(); i++)
      ASSERT_LT(t.rows[i - 1].start, t.rows[i].start);
  }
}

} // namespace
} // namespace ubtrace::runtime::unwind
