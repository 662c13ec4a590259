// Every byte the patcher may leave at an instruction start must stop a
// thread that starts executing there: int3 with SIGTRAP, the others with
// SIGILL (#UD in 64-bit mode). Run on the real CPU, each in a child
// process.
#include "runtime/hook/trap_bytes.h"

#include <cstring>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ubtrace::runtime::hook {
namespace {

void exit_with_signal(int sig) {
  _exit(100 + sig);
}

// In a child: runs `byte` followed by ret; the exit code says what
// happened.
int run_byte(uint8_t byte) {
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGILL, exit_with_signal);
    signal(SIGTRAP, exit_with_signal);
    signal(SIGSEGV, exit_with_signal);
    void *page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
      _exit(2);
    uint8_t code[16];
    memset(code, 0xC3, sizeof code); // ret after whatever the byte eats
    code[0] = byte;
    // Not at the page start: UBSan's function check reads the 8 bytes
    // before a called address.
    uint8_t *at = static_cast<uint8_t *>(page) + 64;
    memcpy(at, code, sizeof code);
    reinterpret_cast<void (*)()>(at)();
    _exit(0); // ran through: not a trap
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(HookTrapBytes, EachStopsExecution) {
  for (uint8_t b : kTrapBytes) {
    int expected = 100 + (b == kInt3 ? SIGTRAP : SIGILL);
    EXPECT_EQ(run_byte(b), expected) << "byte 0x" << std::hex << int(b);
  }
}

TEST(HookTrapBytes, ANormalByteDoesNot) {
  EXPECT_EQ(run_byte(0x90), 0); // nop
}

TEST(HookTrapBytes, SetIsSortedAndRecognized) {
  for (size_t i = 1; i < kTrapBytes.size(); ++i)
    EXPECT_LT(kTrapBytes[i - 1], kTrapBytes[i]);
  EXPECT_TRUE(is_trap_byte(0xCC));
  EXPECT_FALSE(is_trap_byte(0xE9));
}

} // namespace
} // namespace ubtrace::runtime::hook
