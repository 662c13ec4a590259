// Finding glibc's functions in another process: the addresses found for a
// running target must hold the same code as this process's own functions
// (both map the same libc file).
#include "runtime/inject/elf_dynsym.h"
#include "runtime/inject/proc_maps.h"
#include "runtime/inject/remote_memory.h"
#include "runtime/inject/target_glibc.h"
#include "tests/unit/inject/test_support.h"

#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

using namespace std::chrono_literals;

class TargetGlibcTest : public ::testing::Test {
protected:
  void SetUp() override {
    target_.emplace(
        test::TestProcess::start({test::prog_path("counter_loop")}));
    ASSERT_TRUE(target_->wait_for_line("tick"));
  }
  void TearDown() override {
    target_->write_stdin("q");
    target_.reset();
  }

  // The first `size` bytes at `address` in the target.
  std::vector<uint8_t> target_bytes(uint64_t address, size_t size) {
    auto memory = RemoteMemory::open(target_->pid());
    EXPECT_TRUE(memory.ok());
    std::vector<uint8_t> bytes(size);
    EXPECT_TRUE(memory->read(address, bytes.data(), size).ok());
    return bytes;
  }

  std::optional<test::TestProcess> target_;
};

std::vector<uint8_t> own_bytes(const void *address, size_t size) {
  auto *p = static_cast<const uint8_t *>(address);
  return {p, p + size};
}

// This process's libc's definition of `name`: not `&name`, which in a
// sanitizer build is the sanitizer runtime's interceptor in the test
// program itself.
const void *libc_function(const char *name) {
  static void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  return libc ? dlsym(libc, name) : nullptr;
}

TEST_F(TargetGlibcTest, FindsTheFunctionsTheInjectorCalls) {
  auto glibc = TargetGlibc::locate(target_->pid());
  ASSERT_TRUE(glibc.ok()) << glibc.error();
  struct Expected {
    const char *name;
    const void *own;
  } functions[] = {
      {"dlopen", libc_function("dlopen")},
      {"dlsym", libc_function("dlsym")},
      {"dlerror", libc_function("dlerror")},
      {"pthread_create", libc_function("pthread_create")},
      {"pthread_detach", libc_function("pthread_detach")},
      {"munmap", libc_function("munmap")},
  };
  for (const Expected &f : functions) {
    ASSERT_NE(f.own, nullptr) << f.name;
    auto address = glibc->function(f.name);
    ASSERT_TRUE(address.has_value()) << f.name;
    EXPECT_TRUE(glibc->in_glibc_code(*address)) << f.name;
    EXPECT_EQ(target_bytes(*address, 32), own_bytes(f.own, 32)) << f.name;
  }
  EXPECT_FALSE(glibc->function("ubt_no_such_function").has_value());
}

TEST_F(TargetGlibcTest, SyscallAndSigreturnInstructions) {
  auto glibc = TargetGlibc::locate(target_->pid());
  ASSERT_TRUE(glibc.ok()) << glibc.error();
  EXPECT_EQ(target_bytes(glibc->syscall_instruction(), 2),
            (std::vector<uint8_t>{0x0f, 0x05}));
  ASSERT_TRUE(glibc->sigreturn_trampoline().has_value());
  EXPECT_EQ(
      target_bytes(*glibc->sigreturn_trampoline(), 9),
      (std::vector<uint8_t>{0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05}));
}

TEST_F(TargetGlibcTest, NamesTheExportedFunctionAtAnAddress) {
  auto glibc = TargetGlibc::locate(target_->pid());
  ASSERT_TRUE(glibc.ok()) << glibc.error();
  uint64_t read_at = *glibc->function("read");
  auto names = glibc->libc_names_at(read_at + 4);
  EXPECT_NE(std::find(names.begin(), names.end(), "read"), names.end());
  EXPECT_EQ(glibc->describe(read_at + 4).find("libc.so.6:"), 0u)
      << glibc->describe(read_at + 4);
  // Code of the program itself is not glibc.
  auto maps = read_maps(target_->pid());
  ASSERT_TRUE(maps.ok());
  for (const MappedRegion &region : *maps)
    if (region.executable && region.path == test::prog_path("counter_loop"))
      EXPECT_FALSE(glibc->in_glibc_code(region.start));
}

TEST(GlibcPaths, ClassifiesGlibcObjectsByName) {
  EXPECT_EQ(classify_glibc_path("/lib/x86_64-linux-gnu/libc.so.6"),
            GlibcPart::Libc);
  EXPECT_EQ(classify_glibc_path("/lib64/libc-2.17.so"), GlibcPart::Libc);
  EXPECT_EQ(classify_glibc_path("/lib64/ld-linux-x86-64.so.2"),
            GlibcPart::Loader);
  EXPECT_EQ(classify_glibc_path("/lib/libpthread.so.0"), GlibcPart::Libpthread);
  EXPECT_EQ(classify_glibc_path("/lib/libdl.so.2"), GlibcPart::Libdl);
  EXPECT_FALSE(classify_glibc_path("/usr/lib/libcrypto.so.3").has_value());
  EXPECT_FALSE(classify_glibc_path("/opt/libc.so.6.bak/x.so").has_value());
}

TEST(ElfDynamicSymbols, PrefersTheDefaultVersion) {
  // libc exports pthread_create twice (@@GLIBC_2.34 and @GLIBC_2.2.5).
  const void *own = libc_function("pthread_create");
  ASSERT_NE(own, nullptr);
  Dl_info info{};
  ASSERT_NE(dladdr(own, &info), 0);
  int fd = ::open(info.dli_fname, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto symbols = ElfDynamicSymbols::read(fd, info.dli_fname);
  ::close(fd);
  ASSERT_TRUE(symbols.ok()) << symbols.error();
  const ElfFunction *f = symbols->find("pthread_create");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->default_version);
  EXPECT_EQ(f->value + reinterpret_cast<uint64_t>(info.dli_fbase),
            reinterpret_cast<uint64_t>(own));
  // memcpy is an IFUNC: its symbol is a resolver, never called remotely.
  const ElfFunction *memcpy_symbol = symbols->find("memcpy");
  ASSERT_NE(memcpy_symbol, nullptr);
  EXPECT_TRUE(memcpy_symbol->ifunc);
}

TEST(ProcMaps, ParsesPathsProtectionsAndDeletedFiles) {
  auto maps = parse_maps(
      "55d0c0a00000-55d0c0a01000 r-xp 00001000 fd:01 1234   /usr/bin/x y\n"
      "7f00-8f00 rw-p 00000000 00:00 0 \n"
      "9000-a000 r--p 00002000 fd:01 77 /tmp/lib.so (deleted)\n");
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0].start, 0x55d0c0a00000u);
  EXPECT_EQ(maps[0].offset, 0x1000u);
  EXPECT_TRUE(maps[0].executable);
  EXPECT_FALSE(maps[0].writable);
  EXPECT_EQ(maps[0].inode, 1234u);
  EXPECT_EQ(maps[0].path, "/usr/bin/x y");
  EXPECT_EQ(maps[1].path, "");
  EXPECT_TRUE(maps[1].writable);
  EXPECT_TRUE(maps[2].deleted);
  EXPECT_EQ(maps[2].path, "/tmp/lib.so");
}

TEST(TargetGlibcStatic, StaticProgramHasNoGlibcToUse) {
  if (!UBT_INJECT_HAVE_STATIC)
    GTEST_SKIP() << "no libc.a to link a static program with";
  auto target = test::TestProcess::start({test::prog_path("static_prog")});
  ASSERT_TRUE(test::wait_until(
      [&] { return test::blocked_syscall(target.pid(), target.pid()) == 34; }));
  auto glibc = TargetGlibc::locate(target.pid());
  ASSERT_FALSE(glibc.ok());
  EXPECT_EQ(glibc.error(),
            "process " + std::to_string(target.pid()) +
                " has no glibc mapped (statically linked, or another C "
                "library): the agent cannot be loaded into it");
}

} // namespace
} // namespace ubtrace::runtime::inject
