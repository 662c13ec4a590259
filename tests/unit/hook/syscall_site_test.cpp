// Rewritten `syscall` instructions (hook.h, install_syscall_site): calls
// the table leaves to the entry reach it with the registers as the
// instruction would have seen them; an entry that hands the call back has
// it made in the trampoline, where a path with tls_word_after zeroes that
// thread-local word in every task that comes back, both sides of a fork.
#include "helpers.h"
#include "test_functions.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::runtime::hook {
namespace {

using testing::addr;
using testing::bounds_of;

__thread int32_t t_word __attribute__((tls_model("initial-exec")));
int g_seen = 0;             // calls the entry saw
uint64_t g_seen_nr = ~0ull; // the last one's number
uint8_t g_slow[65536];

void hand_back(PtRegs *regs) {
  ++g_seen;
  g_seen_nr = regs->rax;
  regs->rcx = 1;
}

int64_t word_offset() {
  uint64_t tp;
  __asm__("mov %%fs:0, %0" : "=r"(tp));
  return static_cast<int64_t>(reinterpret_cast<uint64_t>(&t_word) - tp);
}

SyscallPath path() {
  SyscallPath p;
  p.entry = &hand_back;
  p.slow = g_slow;
  p.direct = addr(hk_syscall_ret); // for calls the table does not send
  p.tls_word_after = word_offset();
  return p;
}

uint64_t syscall_of(long (*fn)()) {
  return addr(fn) + 5; // after `mov eax, NR`
}

TEST(SyscallSite, HandedBackCallRunsInTheTrampolineAndZeroesTheWord) {
  g_slow[39] = 1;
  ASSERT_TRUE(install_syscall_site(syscall_of(hk_getpid), bounds_of(hk_getpid),
                                   path()));
  t_word = 7;
  g_seen = 0;
  EXPECT_EQ(hk_getpid(), getpid());
  EXPECT_EQ(g_seen, 1);
  EXPECT_EQ(g_seen_nr, 39u);
  EXPECT_EQ(t_word, 0);
  ASSERT_TRUE(remove_syscall_site(syscall_of(hk_getpid)));
  t_word = 7;
  EXPECT_EQ(hk_getpid(), getpid());
  EXPECT_EQ(g_seen, 1); // the instruction is back: nothing sees it
  EXPECT_EQ(t_word, 7);
}

TEST(SyscallSite, DirectCallsLeaveTheWord) {
  g_slow[39] = 0;
  ASSERT_TRUE(install_syscall_site(syscall_of(hk_getpid), bounds_of(hk_getpid),
                                   path()));
  t_word = 7;
  g_seen = 0;
  EXPECT_EQ(hk_getpid(), getpid());
  EXPECT_EQ(g_seen, 0);
  EXPECT_EQ(t_word, 7); // only a call made in the trampoline zeroes it
  ASSERT_TRUE(remove_syscall_site(syscall_of(hk_getpid)));
}

TEST(SyscallSite, BothSidesOfAForkZeroTheWord) {
  g_slow[57] = 1;
  ASSERT_TRUE(
      install_syscall_site(syscall_of(hk_fork), bounds_of(hk_fork), path()));
  t_word = 7;
  long child = hk_fork();
  if (child == 0)
    _exit(t_word == 0 ? 0 : 1);
  ASSERT_GT(child, 0);
  EXPECT_EQ(t_word, 0);
  int status = 0;
  ASSERT_EQ(waitpid(static_cast<pid_t>(child), &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(remove_syscall_site(syscall_of(hk_fork)));
}

} // namespace
} // namespace ubtrace::runtime::hook
