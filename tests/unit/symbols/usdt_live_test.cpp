// USDT against live processes: site and semaphore addresses computed from
// the notes are checked in the running program (a nop at each site; the
// semaphore the program prints), the semaphore is enabled by writing it,
// and every decoded argument is read at a breakpoint on its site (through
// ptrace, from the stopped thread's registers and memory) and compared
// with the values the program printed.
#include "runtime/symbols/address_space.h"
#include "runtime/symbols/probe_resolver.h"
#include "runtime/symbols/usdt_eval.h"
#include "tests/unit/symbols/test_support.h"

#include <csignal>
#include <gtest/gtest.h>
#include <set>
#include <sstream>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

using namespace ubtrace::runtime::symbols;
using ubtrace::symbols_test::Child;
using ubtrace::symbols_test::prog;
using ubtrace::symbols_test::read_process_memory;
using ubtrace::symbols_test::write_process_memory;

namespace {

struct Expectations {
  // "ubt:args2" -> every printed value list (twice: two lists).
  std::multiset<std::pair<std::string, std::vector<int64_t>>> values;
  uint64_t semaphore = 0;
};

Expectations parse_expectations(const std::vector<std::string> &lines) {
  Expectations e;
  for (const auto &line : lines) {
    std::istringstream in(line);
    std::string word, name;
    in >> word;
    if (word == "expect") {
      in >> name;
      std::vector<int64_t> values;
      int64_t v;
      while (in >> v)
        values.push_back(v);
      e.values.insert({name, values});
    } else if (word == "semaphore") {
      std::string addr;
      in >> addr;
      e.semaphore = std::stoull(addr, nullptr, 16);
    }
  }
  return e;
}

std::vector<std::string> usdt_programs() {
  std::vector<std::string> out{prog("usdt_pie"), prog("usdt_nopie")};
  if (UBT_HAVE_GCC_USDT)
    out.push_back(prog("usdt_gcc"));
  return out;
}

// A live USDT program, its probes resolved and their run-time addresses.
struct LiveUsdt {
  explicit LiveUsdt(const std::string &path) : path(path), child(path) {}
  void start() {
    ASSERT_TRUE(child.started());
    expect = parse_expectations(child.read_until_ready());
    ProbeResolver resolver;
    AttachRequest req;
    req.type = UserProbeType::Usdt;
    req.target = path;
    req.provider = "ubt";
    req.function = "*";
    auto expanded = resolver.expand(req);
    ASSERT_TRUE(expanded) << expanded.error();
    probes = *expanded;
    auto snapshot = AddressSpace::snapshot(child.pid());
    ASSERT_TRUE(snapshot);
    space.emplace(std::move(*snapshot));
    auto elf = ElfFile::open(path);
    ASSERT_TRUE(elf);
    auto b = space->load_bias(path, *elf);
    ASSERT_TRUE(b);
    bias = *b;
  }
  uint64_t runtime(uint64_t file_offset) {
    auto a = space->runtime_address(path, file_offset);
    EXPECT_TRUE(a);
    return a.value_or(0);
  }
  std::string path;
  Child child;
  Expectations expect;
  std::vector<ResolvedProbe> probes;
  std::optional<AddressSpace> space;
  uint64_t bias = 0;
};

} // namespace

TEST(UsdtLive, SitesAndSemaphoreAddresses) {
  for (const auto &path : usdt_programs()) {
    SCOPED_TRACE(path);
    LiveUsdt live(path);
    live.start();
    ASSERT_EQ(live.probes.size(), 7u);
    for (const ResolvedProbe &p : live.probes) {
      uint64_t at = live.runtime(p.file_offset);
      EXPECT_EQ(at, live.bias + p.vaddr) << p.name;
      uint8_t byte = 0;
      ASSERT_TRUE(read_process_memory(live.child.pid(), at, &byte, 1));
      EXPECT_EQ(byte, 0x90) << p.name; // the probe's nop
      EXPECT_EQ(p.name, "usdt:" + path + ":ubt:" + p.function);
      if (p.function == "sema") {
        ASSERT_TRUE(p.semaphore);
        EXPECT_EQ(live.runtime(p.semaphore->file_offset),
                  live.expect.semaphore);
        EXPECT_EQ(live.bias + p.semaphore->vaddr, live.expect.semaphore);
      } else {
        EXPECT_FALSE(p.semaphore);
      }
    }
    // Off, then enabled the way an agent would: increment the counter.
    live.child.write("tick\n");
    EXPECT_EQ(live.child.read_line(), "fired enabled=0");
    uint16_t count = 0;
    ASSERT_TRUE(read_process_memory(live.child.pid(), live.expect.semaphore,
                                    &count, 2));
    ++count;
    ASSERT_TRUE(write_process_memory(live.child.pid(), live.expect.semaphore,
                                     &count, 2));
    live.child.write("tick\n");
    EXPECT_EQ(live.child.read_line(), "fired enabled=1");
    live.child.finish();
  }
}

TEST(UsdtLive, ArgumentsReadAtBreakpoints) {
  for (const auto &path : usdt_programs()) {
    SCOPED_TRACE(path);
    LiveUsdt live(path);
    live.start();
    const pid_t pid = live.child.pid();
    // Enable the semaphore so every probe fires.
    uint16_t one = 1;
    ASSERT_TRUE(write_process_memory(pid, live.expect.semaphore, &one, 2));

    if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0)
      GTEST_SKIP() << "ptrace is not permitted here";
    ASSERT_EQ(ptrace(PTRACE_INTERRUPT, pid, 0, 0), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    // int3 over each site's nop: executing it and resuming after it is
    // the same as executing the nop.
    std::map<uint64_t, const ResolvedProbe *> sites;
    for (const ResolvedProbe &p : live.probes) {
      uint64_t at = live.runtime(p.file_offset);
      uint8_t int3 = 0xcc;
      ASSERT_TRUE(write_process_memory(pid, at, &int3, 1));
      sites[at] = &p;
    }
    ASSERT_EQ(ptrace(PTRACE_CONT, pid, 0, 0), 0);
    live.child.write("fire\n");

    std::multiset<std::pair<std::string, std::vector<int64_t>>> seen;
    while (seen.size() < live.probes.size()) {
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      ASSERT_TRUE(WIFSTOPPED(status)) << "the program died: " << status;
      int sig = WSTOPSIG(status);
      if (sig != SIGTRAP) {
        ptrace(PTRACE_CONT, pid, 0, sig);
        continue;
      }
      user_regs_struct regs;
      ASSERT_EQ(ptrace(PTRACE_GETREGS, pid, 0, &regs), 0);
      uint64_t site = regs.rip - 1;
      ASSERT_TRUE(sites.count(site)) << std::hex << site;
      const ResolvedProbe &p = *sites[site];
      // pt_regs at the probe: the registers, rip at the site itself.
      regs.rip = site;
      UsdtArgSource src;
      static_assert(sizeof(user_regs_struct) >= kPtRegsSize);
      src.pt_regs = reinterpret_cast<const uint64_t *>(&regs);
      src.read_memory = [pid](uint64_t addr, void *out, size_t size) {
        return read_process_memory(pid, addr, out, size);
      };
      std::vector<int64_t> values;
      for (const UsdtArg &arg : p.usdt_args) {
        auto v = read_usdt_arg(arg, src);
        ASSERT_TRUE(v) << p.name << " " << arg.text << ": " << v.error();
        values.push_back(static_cast<int64_t>(*v));
      }
      seen.insert({p.provider + ":" + p.function, values});
      ASSERT_EQ(ptrace(PTRACE_CONT, pid, 0, 0), 0);
    }
    EXPECT_EQ(seen, live.expect.values);
    EXPECT_EQ(live.child.read_line(), "fired enabled=1");
    // At EOF the program exits; no option asked for exit stops, so the
    // traced child just ends and finish() reaps it.
    live.child.finish();
  }
}
