// Every ValueType kind decoded from raw bytes and printed in text and JSON.
#include "backends/output/decode.h"
#include "backends/output/json_value.h"
#include "backends/output/text_value.h"
#include "tests/unit/output/helpers.h"

#include <arpa/inet.h>
#include <cstdlib>
#include <gtest/gtest.h>
#include <optional>
#include <sys/socket.h>

namespace ubtrace::output::test {
namespace {

struct Printed {
  std::string text, json;
};

Printed print(const ValueType &t, const std::vector<uint8_t> &bytes,
              const FormatContext &ctx = {}) {
  Value v = decode(t, bytes, ctx);
  return {text_of(v), json_of(v)};
}

TEST(ValueFormat, IntegersBySizeAndSign) {
  struct Case {
    uint32_t size;
    bool is_signed;
    uint64_t raw;
    std::string expected;
  };
  const Case cases[] = {
      {1, true, 0xff, "-1"},       {1, false, 0xff, "255"},
      {2, true, 0x8000, "-32768"}, {2, false, 0x8000, "32768"},
      {4, true, 0xfffffffe, "-2"}, {4, false, 0xfffffffe, "4294967294"},
      {8, true, UINT64_MAX, "-1"}, {8, false, 12345, "12345"},
  };
  for (const auto &c : cases) {
    auto p = print(int_type(c.size, c.is_signed),
                   Packer().put(0, c.raw, c.size).bytes());
    EXPECT_EQ(p.text, c.expected) << c.size << (c.is_signed ? "s" : "u");
    EXPECT_EQ(p.json, c.expected) << c.size << (c.is_signed ? "s" : "u");
  }
}

TEST(ValueFormat, JsonQuotesIntegersADoubleCannotHold) {
  // 2^53 + 1 does not survive a round trip through a double; 2^60 does.
  auto p = print(u64(), le64((uint64_t{1} << 53) + 1));
  EXPECT_EQ(p.text, "9007199254740993");
  EXPECT_EQ(p.json, "\"9007199254740993\"");
  EXPECT_EQ(print(u64(), le64(uint64_t{1} << 60)).json, "1152921504606846976");
  EXPECT_EQ(print(u64(), le64(UINT64_MAX)).json, "\"18446744073709551615\"");
  EXPECT_EQ(print(i64(), le64(uint64_t{1} << 63)).json, "-9223372036854775808");
  EXPECT_EQ(
      print(i64(), le64(static_cast<uint64_t>(-((int64_t{1} << 53) + 1)))).json,
      "\"-9007199254740993\"");
}

TEST(ValueFormat, DivisionHappensInTheStoredWidth) {
  // print(@x, 0, div) divides a signed 32-bit value as int32.
  Value v =
      decode(int_type(4, true), Packer().put(0, 0xfffffff6, 4).bytes(), {}, 3);
  EXPECT_EQ(text_of(v), "-3");
  v = decode(u64(), le64(10), {}, 4);
  EXPECT_EQ(text_of(v), "2");
}

TEST(ValueFormat, BooleanAndPointer) {
  auto b = print(simple_type(Kind::Boolean, 1), {1});
  EXPECT_EQ(b.text, "true");
  EXPECT_EQ(b.json, "true");
  b = print(simple_type(Kind::Boolean, 1), {0});
  EXPECT_EQ(b.text, "false");
  // Pointers print in hex as text, as a number in JSON.
  auto p = print(simple_type(Kind::Pointer, 8), le64(0x32));
  EXPECT_EQ(p.text, "0x32");
  EXPECT_EQ(p.json, "50");
  EXPECT_EQ(print(simple_type(Kind::Pointer, 8), le64(0)).text, "0x0");
}

TEST(ValueFormat, StringsStopAtNulAndMarkTruncation) {
  auto p = print(string_type(8), Packer().str("abc", 8).bytes());
  EXPECT_EQ(p.text, "abc");
  EXPECT_EQ(p.json, "\"abc\"");
  // Filling the buffer with no NUL: bpftrace assumes it was cut short.
  p = print(string_type(4), Packer().str("abcd", 4).bytes());
  EXPECT_EQ(p.text, "abcd..");
  FormatContext ctx;
  ctx.str_trunc_trailer = "_xxx";
  EXPECT_EQ(print(string_type(4), Packer().str("abcd", 4).bytes(), ctx).text,
            "abcd_xxx");
}

TEST(ValueFormat, JsonStringEscapes) {
  EXPECT_EQ(json_string("a b \n d e"), "\"a b \\n d e\"");
  EXPECT_EQ(json_string("test \r \n \t \\ \" bar"),
            "\"test \\r \\n \\t \\\\ \\\" bar\"");
  EXPECT_EQ(json_string(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(json_string(std::string("\0", 1)), "\"\\u0000\"");
  // UTF-8 passes through (bpftrace 0.26 writes "\uffffffc3"; invalid JSON).
  EXPECT_EQ(json_string("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

TEST(ValueFormat, BuffersEscapeNonPrintableBytes) {
  ValueType t = simple_type(Kind::Buffer, 4 + 8);
  auto bytes = Packer().put(0, 7, 4).put_str(4, std::string("ok_key\0", 7), 8);
  auto p = print(t, bytes.bytes());
  EXPECT_EQ(p.text, "ok_key\\x00");
  // JSON: the bytes as numbers, as bpftrace's char emitter writes them.
  EXPECT_EQ(p.json, "[111,107,95,107,101,121,0]");
  EXPECT_EQ(buffer_text("Hello\0", false, true), "\\x48\\x65\\x6c\\x6c\\x6f");
  EXPECT_EQ(buffer_text(std::string("Hello\0", 6), false, false),
            "48 65 6c 6c 6f 00");
  EXPECT_EQ(buffer_text("\x7f~ \x1f"), "\\x7f~ \\x1f");
  // A length beyond the buffer is clipped to it.
  auto clipped = Packer().put(0, 100, 4).put_str(4, "abcdefgh", 8);
  EXPECT_EQ(print(t, clipped.bytes()).text, "abcdefgh");
}

TEST(ValueFormat, TuplesRecordsStructsArrays) {
  ValueType inner = tuple_type({i64(), i64()});
  ValueType t = tuple_type({i64(), i64(), string_type(8), inner});
  auto bytes = Packer().u64(1).u64(2).str("string", 8).u64(4).u64(5);
  auto p = print(t, bytes.bytes());
  EXPECT_EQ(p.text, "(1, 2, string, (4, 5))");
  EXPECT_EQ(p.json, "[1,2,\"string\",[4,5]]");

  ValueType rec = composite(Kind::Record, {"x", "y"}, {i64(), string_type(4)});
  p = print(rec, Packer().u64(1).str("ab", 4).bytes());
  EXPECT_EQ(p.text, "{ .x = 1, .y = ab }");
  EXPECT_EQ(p.json, "{\"x\": 1, \"y\": \"ab\"}");

  ValueType arr;
  arr.kind = Kind::Array;
  arr.count = 2;
  arr.fields.push_back({"", 0, int_type(4, true)});
  arr.size = 8;
  ValueType st = composite(
      Kind::Struct, {"y", "n"},
      {composite(Kind::Struct, {"m"}, {arr}), int_type(4, true)}, "struct Foo");
  p = print(st, Packer().put(0, 2, 4).put(4, 3, 4).put(8, 7, 4).bytes());
  EXPECT_EQ(p.text, "{ .y = { .m = [2,3] }, .n = 7 }");
  EXPECT_EQ(p.json, "{\"y\": {\"m\": [2,3]}, \"n\": 7}");

  ValueType empty = composite(Kind::Record, {}, {});
  EXPECT_EQ(print(empty, {}).text, "{}");
  EXPECT_EQ(print(empty, {}).json, "{}");
  EXPECT_EQ(print(simple_type(Kind::None, 0), {}).text, "null");
  EXPECT_EQ(print(simple_type(Kind::None, 0), {}).json, "null");
}

TEST(ValueFormat, EnumsAreNamedInTextAndNumbersInJson) {
  ValueType t = int_type(4, false);
  t.kind = Kind::Enum;
  t.type_name = "enum Foo";
  t.enum_names = {{1, "ONE"}, {99999, "OTHER"}};
  auto p = print(t, Packer().put(0, 99999, 4).bytes());
  EXPECT_EQ(p.text, "OTHER");
  EXPECT_EQ(p.json, "99999");
  p = print(t, Packer().put(0, 100, 4).bytes());
  EXPECT_EQ(p.text, "100");
  EXPECT_EQ(p.json, "100");
}

class FakeSymbols : public Symbolizer {
public:
  std::vector<SymbolFrame> user(uint64_t addr, int64_t pid) override {
    last_pid = pid;
    if (addr == 0x1010)
      return {{"inner", 0, "", "lib.c", 12, true},
              {"outer", 0x10, "/bin/app", "app.c", 40, false}};
    if (addr == 0x2000)
      return {{"main", 5, "/bin/app", "", 0, false}};
    return {};
  }
  std::vector<SymbolFrame> kernel(uint64_t addr) override {
    if (addr == 0xffff0010)
      return {{"do_nanosleep", 0x10, "", "", 0, false}};
    return {};
  }
  std::optional<BuildIdFrame> build_id(uint64_t addr, int64_t) override {
    if (addr == 0x2000)
      return BuildIdFrame{{0xab, 0x01, 0xff}, 0x5};
    return std::nullopt;
  }
  int64_t last_pid = -2;
};

TEST(ValueFormat, UsymAndKsym) {
  FakeSymbols syms;
  FormatContext ctx;
  ctx.symbolizer = &syms;
  ValueType usym = simple_type(Kind::USym, 16);
  auto p = print(usym, Packer().u64(0x1010).u64(42).bytes(), ctx);
  EXPECT_EQ(p.text, "outer");
  EXPECT_EQ(p.json, "\"outer\"");
  EXPECT_EQ(syms.last_pid, 42);
  // Unknown addresses print as bpftrace prints a void*.
  EXPECT_EQ(print(usym, Packer().u64(0x1).u64(42).bytes(), ctx).text, "0x1");
  EXPECT_EQ(print(usym, Packer().u64(0x1).u64(42).bytes()).text, "0x1");
  ValueType ksym = simple_type(Kind::KSym, 8);
  EXPECT_EQ(print(ksym, le64(0xffff0010), ctx).text, "do_nanosleep");
  EXPECT_EQ(print(ksym, le64(0), ctx).text, "0");
}

ValueType stack_type(Kind kind, uint8_t mode, uint32_t limit, bool with_pid) {
  ValueType t = simple_type(kind, 8 + 8 * limit + (with_pid ? 8 : 0));
  t.stack_limit = limit;
  t.stack_mode = mode;
  return t;
}

TEST(ValueFormat, UserStackModes) {
  FakeSymbols syms;
  FormatContext ctx;
  ctx.symbolizer = &syms;
  ctx.default_pid = 7;
  auto frames = Packer().u64(3).u64(0x1010).u64(0x2000).u64(0x3000).u64(0);
  // bpftrace mode: 8 spaces, offsets, inlined frames first, file:line.
  auto p = print(stack_type(Kind::UStack, 0, 4, false), frames.bytes(), ctx);
  EXPECT_EQ(p.text, "\n"
                    "        [inlined] inner@lib.c:12\n"
                    "        outer+16@app.c:40\n"
                    "        main+5\n"
                    "        0x3000\n");
  EXPECT_EQ(syms.last_pid, 7);
  EXPECT_EQ(p.json, "\"\\n        [inlined] inner@lib.c:12\\n        "
                    "outer+16@app.c:40\\n        main+5\\n        0x3000\\n\"");
  ctx.show_debug_info = false;
  EXPECT_EQ(
      print(stack_type(Kind::UStack, 0, 4, false), frames.bytes(), ctx).text,
      "\n        [inlined] inner\n        outer+16\n        main+5\n"
      "        0x3000\n");
  // perf mode: tab, hex address, module or (inlined) or ([unknown]).
  p = print(stack_type(Kind::UStack, 1, 4, false), frames.bytes(), ctx);
  EXPECT_EQ(p.text, "\n"
                    "\t1010 inner (inlined)\n"
                    "\t1010 outer+16 (/bin/app)\n"
                    "\t2000 main+5 (/bin/app)\n"
                    "\t3000 0x3000 ([unknown])\n");
  // raw mode: bare hex addresses.
  p = print(stack_type(Kind::UStack, 2, 4, false), frames.bytes(), ctx);
  EXPECT_EQ(p.text, "\n1010\n2000\n3000\n");
  // build_id mode: build id and file offset where known.
  p = print(stack_type(Kind::UStack, 3, 4, false), frames.bytes(), ctx);
  EXPECT_EQ(p.text, "\n1010\nab01ff 0x05\n3000\n");
}

TEST(ValueFormat, StackPidAfterTheFramesAndUnwindFailure) {
  FakeSymbols syms;
  FormatContext ctx;
  ctx.symbolizer = &syms;
  auto bytes = Packer().u64(3).u64(0x2000).u64(UINT64_MAX).u64(0x2000).u64(99);
  auto p = print(stack_type(Kind::UStack, 0, 3, true), bytes.bytes(), ctx);
  EXPECT_EQ(p.text, "\n        main+5\n        <unwind failure>\n");
  EXPECT_EQ(syms.last_pid, 99);
}

TEST(ValueFormat, KernelStacks) {
  FakeSymbols syms;
  FormatContext ctx;
  ctx.symbolizer = &syms;
  auto bytes = Packer().u64(2).u64(0xffff0010).u64(0xffff9999);
  EXPECT_EQ(
      print(stack_type(Kind::KStack, 0, 2, false), bytes.bytes(), ctx).text,
      "\n        do_nanosleep+16\n        0xffff9999\n");
  // Kernel frames have no module in perf mode, unknown ones no suffix.
  EXPECT_EQ(
      print(stack_type(Kind::KStack, 1, 2, false), bytes.bytes(), ctx).text,
      "\n\tffff0010 do_nanosleep+16\n\tffff9999 0xffff9999\n");
  // The frame count never exceeds the stored frames.
  auto lying = Packer().u64(50).u64(0xffff0010).u64(0xffff0010);
  EXPECT_EQ(
      print(stack_type(Kind::KStack, 2, 2, false), lying.bytes(), ctx).text,
      "\nffff0010\nffff0010\n");
}

TEST(ValueFormat, InetAndMacAddresses) {
  ValueType inet = simple_type(Kind::Inet, 24);
  Packer v4(24);
  v4.put(0, AF_INET).put(8, 0x0100007f, 4);
  EXPECT_EQ(print(inet, v4.bytes()).text, "127.0.0.1");
  Packer v6(24);
  v6.put(0, AF_INET6).put(8 + 15, 1, 1);
  EXPECT_EQ(print(inet, v6.bytes()).text, "::1");
  EXPECT_EQ(print(inet, v6.bytes()).json, "\"::1\"");
  Packer other(24);
  other.put(0, 99);
  EXPECT_EQ(print(inet, other.bytes()).text, "");

  ValueType mac = simple_type(Kind::MacAddr, 6);
  EXPECT_EQ(print(mac, {0x05, 0x04, 0x03, 0x02, 0x01, 0xab}).text,
            "05:04:03:02:01:AB");
}

TEST(ValueFormat, SyscallNameUsesTheKernelTableNames) {
  ValueType t = simple_type(Kind::SyscallName, 8);
  EXPECT_EQ(print(t, le64(0)).text, "read");
  EXPECT_EQ(print(t, le64(4)).text, "stat");
  EXPECT_EQ(print(t, le64(166)).text, "umount2");
  EXPECT_EQ(print(t, le64(257)).text, "openat");
  EXPECT_EQ(print(t, le64(462)).text, "mseal");
  EXPECT_EQ(print(t, le64(1000)).text, "Unknown syscall");
  EXPECT_EQ(print(t, le64(static_cast<uint64_t>(-1))).text, "Unknown syscall");
  // Narrowed to an int first, as bpftrace's.
  EXPECT_EQ(print(t, le64((1ull << 32) | 59)).text, "execve");
  EXPECT_EQ(print(t, le64(1)).json, "\"write\"");
}

TEST(ValueFormat, SignalNameUsesStrsignalTexts) {
  ValueType t = simple_type(Kind::SignalName, 8);
  EXPECT_EQ(print(t, le64(2)).text, "Interrupt");
  EXPECT_EQ(print(t, le64(31)).text, "Bad system call");
  EXPECT_EQ(print(t, le64(0)).text, "Unknown signal 0");
  EXPECT_EQ(print(t, le64(32)).text, "Unknown signal 32");
  EXPECT_EQ(print(t, le64(35)).text, "Real-time signal 1");
  EXPECT_EQ(print(t, le64(64)).text, "Real-time signal 30");
  EXPECT_EQ(print(t, le64(65)).text, "N/A");
  EXPECT_EQ(print(t, le64(static_cast<uint64_t>(-2))).text, "N/A");
  // Narrowed to an int first, as the C library's argument is.
  EXPECT_EQ(print(t, le64((1ull << 32) | 9)).text, "Killed");
  EXPECT_EQ(print(t, le64(15)).json, "\"Terminated\"");
}

TEST(ValueFormat, StrerrorUsesKernelTexts) {
  ValueType t = simple_type(Kind::StrError, 8);
  EXPECT_EQ(print(t, le64(7)).text, "Argument list too long");
  EXPECT_EQ(print(t, le64(1)).text, "Operation not permitted");
  // Negative codes read as their magnitude; kernel wording, not glibc's.
  EXPECT_EQ(print(t, le64(static_cast<uint64_t>(-9))).text, "Bad file number");
  EXPECT_EQ(print(t, le64(11)).text, "Try again (operation would block)");
  EXPECT_EQ(print(t, le64(0)).text, "Success");
  EXPECT_EQ(print(t, le64(41)).text, "Unknown error"); // no errno 41
  EXPECT_EQ(print(t, le64(4000)).text, "Unknown error");
  EXPECT_EQ(print(t, le64(7)).json, "\"Argument list too long\"");
}

TEST(ValueFormat, ProbeNamesAndTimestamps) {
  std::vector<std::string> probes = {"BEGIN", "uprobe:/bin/ls:main"};
  std::vector<std::string> formats = {"%Y-%m-%d %H:%M:%S.%f", "%s.%k|%l"};
  FormatContext ctx;
  ctx.probe_names = &probes;
  ctx.strftime_formats = &formats;
  EXPECT_EQ(print(simple_type(Kind::Probe, 8), le64(1), ctx).text,
            "uprobe:/bin/ls:main");
  const char *tz = std::getenv("TZ");
  std::optional<std::string> saved_tz =
      tz ? std::optional<std::string>(tz) : std::nullopt;
  setenv("TZ", "UTC", 1);
  tzset();
  ValueType ts = simple_type(Kind::Timestamp, 16);
  // 2021-01-01T00:00:00Z plus 123456789 ns.
  const uint64_t ns = 1609459200ull * 1000000000ull + 123456789ull;
  EXPECT_EQ(print(ts, Packer().u64(0).u64(ns).bytes(), ctx).text,
            "2021-01-01 00:00:00.123456");
  EXPECT_EQ(print(ts, Packer().u64(1).u64(ns).bytes(), ctx).text,
            "1609459200.123456789|123");
  // The offset turns boot-relative times into wall-clock times.
  ctx.timestamp_offset_ns = 1000000000;
  EXPECT_EQ(print(ts, Packer().u64(1).u64(5).bytes(), ctx).text,
            "1.000000005|000");
  ctx.timestamp_offset_ns = 0;
  // Second 0 of the epoch prints "(?)", as in bpftrace.
  EXPECT_EQ(print(ts, Packer().u64(1).u64(5).bytes(), ctx).text, "(?)");
  // An id with no format.
  EXPECT_EQ(print(ts, Packer().u64(9).u64(ns).bytes(), ctx).text, "(?)");
  if (saved_tz)
    setenv("TZ", saved_tz->c_str(), 1);
  else
    unsetenv("TZ");
  tzset();
}

TEST(ValueFormat, UsernameAndCgroupThroughSystemInfo) {
  struct Fixed : SystemInfo {
    std::string username(uint64_t uid) override {
      return uid == 0 ? "root" : "";
    }
    std::string cgroup_path(uint64_t id) override {
      return "unified:/id" + std::to_string(id);
    }
  } fixed;
  FormatContext ctx;
  ctx.system = &fixed;
  EXPECT_EQ(print(simple_type(Kind::Username, 8), le64(0), ctx).text, "root");
  EXPECT_EQ(print(simple_type(Kind::CgroupPath, 8), le64(5), ctx).json,
            "\"unified:/id5\"");
  EXPECT_EQ(print(simple_type(Kind::Username, 8), le64(0)).text, "");
}

} // namespace
} // namespace ubtrace::output::test
