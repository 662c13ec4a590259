// Real clang-compiled programs (progs/*.bpf.c) loaded, verified, bound to
// the test maps and helpers, and run; results are checked against the same
// computation done in C++ here.
#include "common.h"
#include "test_runtime.h"

#include <cstring>
#include <gtest/gtest.h>
#include <set>
#include <sys/prctl.h>
#include <unistd.h>

namespace ubtrace::vm::test {
namespace {

constexpr ContextInfo kArgsCtx{sizeof(args)};

struct Stats {
  uint64_t count, sum, min, max;
};

// Runs `program` of `rt` once with the given arguments.
int64_t call(Runtime &rt, const BoundProgram &prog, args a) {
  if (prog.insns.empty())
    return INT64_MIN; // preparing it failed, already reported
  RunResult r = run(prog, &a);
  EXPECT_EQ(r.status, RunStatus::Ok) << describe(r.status);
  return int64_t(int32_t(r.r0));
}

BoundProgram must_prepare(Runtime &rt, const std::string &name,
                          const ContextInfo &ctx = kArgsCtx) {
  auto prog = rt.prepare(name, ctx);
  if (!prog) {
    ADD_FAILURE() << name << ": " << prog.error();
    return {};
  }
  return std::move(*prog);
}

TEST(Programs, HashMapAggregatesPerKey) {
  Runtime rt = Runtime::from_file("maps");
  BoundProgram record = must_prepare(rt, "record");
  ASSERT_FALSE(record.insns.empty());
  std::map<uint64_t, Stats> want;
  std::vector<uint64_t> buckets(16);
  for (uint64_t i = 0; i < 500; ++i) {
    uint64_t key = (i * 7919) % 23, value = (i * i * 2654435761u) % 100000;
    call(rt, record, args{{key, value}});
    auto it = want.find(key);
    if (it == want.end())
      want[key] = {1, value, value, value};
    else
      it->second = {it->second.count + 1, it->second.sum + value,
                    std::min(it->second.min, value),
                    std::max(it->second.max, value)};
    unsigned bucket = 0;
    for (uint64_t v = value; v > 1 && bucket < 15; v >>= 1)
      ++bucket;
    ++buckets[bucket];
  }
  auto &map = static_cast<HashMap &>(rt.map("by_key"));
  ASSERT_EQ(map.size(), want.size());
  for (auto &[key, stats] : want) {
    auto *got = static_cast<Stats *>(map.lookup(&key));
    ASSERT_NE(got, nullptr) << key;
    EXPECT_EQ(got->count, stats.count) << key;
    EXPECT_EQ(got->sum, stats.sum) << key;
    EXPECT_EQ(got->min, stats.min) << key;
    EXPECT_EQ(got->max, stats.max) << key;
  }
  auto &array = rt.map("buckets");
  for (uint32_t b = 0; b < 16; ++b)
    EXPECT_EQ(*static_cast<uint64_t *>(array.lookup(&b)), buckets[b]) << b;

  BoundProgram forget = must_prepare(rt, "forget");
  EXPECT_EQ(call(rt, forget, args{{5}}), 0);
  EXPECT_EQ(call(rt, forget, args{{5}}), -ENOENT);
  EXPECT_EQ(map.size(), want.size() - 1);

  BoundProgram copy = must_prepare(rt, "copy");
  EXPECT_EQ(call(rt, copy, args{{5}}), -1);
  EXPECT_EQ(call(rt, copy, args{{6}}),
            int64_t(want[6].count * 1000 + want[6].max));
}

TEST(Programs, StringsOnTheStackAndRingBuffer) {
  Runtime rt = Runtime::from_file("strings");
  BoundProgram greet = must_prepare(rt, "greet");
  const char *inputs[] = {"hello world", "hello there", "help", "", "hello"};
  for (const char *s : inputs) {
    std::string want = "hello world";
    int64_t same = 0;
    while (same < int64_t(want.size()) && s[same] && s[same] == want[same])
      ++same;
    EXPECT_EQ(call(rt, greet, args{{reinterpret_cast<uint64_t>(s)}}), same)
        << s;
  }
  // An unreadable pointer makes probe_read_user_str fail, not the VM.
  EXPECT_EQ(call(rt, greet, args{{8}}), -1);
  auto &events = rt.map("events");
  ASSERT_EQ(events.records.size(), std::size(inputs));
  char comm[17] = {};
  prctl(PR_GET_NAME, comm);
  for (size_t i = 0; i < std::size(inputs); ++i) {
    event e;
    ASSERT_EQ(events.records[i].size(), sizeof(e));
    memcpy(&e, events.records[i].data(), sizeof(e));
    EXPECT_EQ(e.pid_tgid >> 32, uint64_t(getpid()));
    EXPECT_STREQ(e.comm, comm);
    EXPECT_STREQ(e.text, inputs[i]);
  }

  BoundProgram emit = must_prepare(rt, "emit");
  EXPECT_EQ(call(rt, emit, args{{42}}), 0);
  ASSERT_EQ(events.records.size(), std::size(inputs) + 1);
  ASSERT_EQ(rt.map("perf").records.size(), 1u);
  for (auto *records : {&events.records, &rt.map("perf").records}) {
    event e;
    memcpy(&e, records->back().data(), sizeof(e));
    EXPECT_EQ(e.value, 42u);
    EXPECT_STREQ(e.text, "stack text");
  }

  BoundProgram maybe = must_prepare(rt, "maybe");
  size_t before = events.records.size();
  EXPECT_EQ(call(rt, maybe, args{{3}}), 1);
  EXPECT_EQ(call(rt, maybe, args{{4}}), 1);
  ASSERT_EQ(events.records.size(), before + 1); // 4 was discarded
}

TEST(Programs, BoundedLoops) {
  Runtime rt = Runtime::from_file("loops");
  BoundProgram squares = must_prepare(rt, "squares");
  uint64_t sq = 0;
  for (uint64_t i = 0; i < 100; ++i)
    sq += i * i;
  EXPECT_EQ(call(rt, squares, args{{5}}), int64_t(int32_t(sq + 5)));

  BoundProgram triangle = must_prepare(rt, "triangle");
  for (uint64_t n : {0ull, 1ull, 10ull, 999ull, 1000ull, 5000ull}) {
    uint64_t m = std::min<uint64_t>(n, 1000);
    EXPECT_EQ(call(rt, triangle, args{{n}}), int64_t(int32_t(m * (m + 1) / 2)))
        << n;
  }

  BoundProgram nested = must_prepare(rt, "nested");
  for (uint64_t mask : {0ull, 1ull, 6ull, 31ull}) {
    int want = 0;
    for (int i = 0; i < 20; ++i)
      for (int j = 0; j < 20; ++j)
        want += ((i ^ j) & mask) != 0;
    EXPECT_EQ(call(rt, nested, args{{mask}}), want) << mask;
  }

  BoundProgram scan = must_prepare(rt, "scan");
  EXPECT_EQ(call(rt, scan, args{{3, 100}}), 34);
  EXPECT_EQ(call(rt, scan, args{{0, 0}}), 64);
  uint32_t zero = 0;
  auto *table = static_cast<uint64_t *>(rt.map("table").lookup(&zero));
  EXPECT_EQ(table[63], 0u);
  call(rt, scan, args{{5, 0}});
  EXPECT_EQ(table[63], 5u * 63);

  BoundProgram lookup = must_prepare(rt, "lookup");
  EXPECT_EQ(call(rt, lookup, args{{10}}), 50);
  EXPECT_EQ(call(rt, lookup, args{{64}}), -2);

  BoundProgram reverse = must_prepare(rt, "reverse");
  args a{{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull}};
  uint8_t buf[16];
  memcpy(buf, a.arg, 16);
  uint64_t folded = 0;
  for (int i = 15; i >= 0; --i)
    folded = folded * 31 + buf[i];
  EXPECT_EQ(call(rt, reverse, a), int64_t(int32_t(folded)));
}

uint64_t mix(uint64_t a, uint64_t b) {
  return a * 31 + (b ^ (a >> 3));
}

TEST(Programs, BpfToBpfCalls) {
  Runtime rt = Runtime::from_file("calls");
  auto verified = rt.verify("calls", kArgsCtx);
  ASSERT_TRUE(verified) << verified.error();
  EXPECT_EQ(verified->subprogs.size(), 4u); // calls, total, fill, mix
  EXPECT_GE(verified->subprogs[1].stack_depth, 64u);
  BoundProgram calls = must_prepare(rt, "calls");
  for (uint64_t seed : {0ull, 1ull, 12345ull, ~0ull}) {
    uint64_t t = 0;
    for (int i = 0; i < 8; ++i)
      t += mix(seed, uint64_t(i));
    EXPECT_EQ(call(rt, calls, args{{seed}}), int64_t(int32_t(t ^ (t >> 32))));
  }
  BoundProgram direct = must_prepare(rt, "direct");
  EXPECT_EQ(call(rt, direct, args{{77, 5}}), int64_t(int32_t(mix(77, 5))));
}

TEST(Programs, BpfLoopRunsTheCallback) {
  Runtime rt = Runtime::from_file("callbacks");
  auto verified = rt.verify("looped", kArgsCtx);
  ASSERT_TRUE(verified) << verified.error();
  ASSERT_EQ(verified->subprogs.size(), 2u);
  EXPECT_TRUE(verified->subprogs[1].is_callback);
  BoundProgram looped = must_prepare(rt, "looped");
  for (auto [n, limit] : {std::pair<uint64_t, uint64_t>{10, 100},
                          {10, 4},
                          {0, 5},
                          {1000, 1000}}) {
    uint64_t sum = 0, calls = 0, done = 0;
    for (uint64_t i = 0; i < n; ++i) {
      ++calls;
      if (i >= limit) {
        done = i + 1;
        break;
      }
      sum += i;
      done = i + 1;
    }
    int64_t want = int32_t(sum * 1000 + calls + (done << 20));
    EXPECT_EQ(call(rt, looped, args{{n, limit}}), want) << n << " " << limit;
  }
}

TEST(Programs, ForEachMapElemVisitsEveryElement) {
  Runtime rt = Runtime::from_file("callbacks");
  BoundProgram each = must_prepare(rt, "each");
  for (auto [n, stop] : {std::pair<uint64_t, uint64_t>{10, 100}, {20, 5}}) {
    auto &values = static_cast<HashMap &>(rt.map("values"));
    for (uint32_t k = 0; k < 64; ++k)
      values.remove(&k);
    int64_t r = call(rt, each, args{{n, stop}});
    uint64_t visited = uint64_t(r) & 0xff;
    EXPECT_EQ(visited, std::min(n, stop));
    if (stop >= n) { // every element: the sum is known
      uint64_t sum = 0;
      for (uint64_t k = 0; k < n; ++k)
        sum += k * 10 + k;
      EXPECT_EQ(uint64_t(r) >> 8, sum);
    }
  }
}

TEST(Programs, GlobalDataSections) {
  Runtime rt = Runtime::from_file("globals");
  const Object &obj = rt.object();
  std::set<std::string> names;
  for (const MapDef &m : obj.maps)
    names.insert(m.name);
  EXPECT_TRUE(names.count(".rodata"));
  EXPECT_TRUE(names.count(".data"));
  EXPECT_TRUE(names.count(".bss"));
  BoundProgram config = must_prepare(rt, "config");
  uint64_t table[4] = {10, 20, 30, 40};
  uint64_t last = 0, swapped = 0;
  uint32_t flags = 0;
  for (uint64_t i = 0; i < 40; ++i) {
    uint64_t x = i * 5;
    table[x & 3] += 1;
    uint64_t old = last;
    last = x;
    flags |= 1u << (x & 31);
    if (swapped == old)
      swapped = x + 1;
    EXPECT_EQ(call(rt, config, args{{x}}), int64_t((table[x & 3] * 7) >> 3));
  }
  // .data and .bss hold what the program wrote.
  EXPECT_EQ(memcmp(rt.global<uint64_t>("table"), table, sizeof(table)), 0);
  EXPECT_EQ(*rt.global<uint64_t>("hits"), 40u);
  EXPECT_EQ(*rt.global<uint64_t>("last"), last);
  EXPECT_EQ(*rt.global<uint32_t>("flags32"), flags);
  EXPECT_EQ(*rt.global<uint64_t>("swapped"), swapped);
  EXPECT_EQ(*rt.global<uint64_t>("scale"), 7u); // .rodata, read-only

  printk_lines().clear();
  BoundProgram print = must_prepare(rt, "print");
  EXPECT_EQ(call(rt, print, args{{12, 34}}), 6);
  ASSERT_EQ(printk_lines().size(), 1u);
  EXPECT_EQ(printk_lines()[0], "value 12 of print");
  EXPECT_STREQ(rt.global<char>("message"), "12-34");
}

} // namespace
} // namespace ubtrace::vm::test

namespace ubtrace::vm::test {
namespace {

unsigned log2_bucket(int64_t value) {
  if (value < 0)
    return 0;
  if (value == 0)
    return 1;
  uint64_t v = uint64_t(value);
  unsigned r = 2;
  for (int shift = 32; shift > 0; shift >>= 1)
    if (v >= (1ull << shift)) {
      v >>= shift;
      r += unsigned(shift);
    }
  return r;
}

struct comm_key {
  char comm[16];
};

TEST(Programs, BpftraceStyleProbe) {
  Runtime rt = Runtime::from_file("tracing");
  BoundProgram trace = must_prepare(rt, "trace", kPtRegsContext);
  ASSERT_FALSE(trace.insns.empty());
  comm_key key{};
  prctl(PR_GET_NAME, key.comm);
  std::vector<uint64_t> want(66);
  const char *text = "a string from the traced process";
  const int64_t values[] = {-5, 0, 1, 2, 3, 1000, int64_t(1) << 40, INT64_MAX};
  uint64_t regs[21] = {};
  for (int64_t v : values) {
    regs[0] = reinterpret_cast<uint64_t>(text);
    regs[1] = uint64_t(v);
    RunResult r = run(trace, regs);
    ASSERT_EQ(r.status, RunStatus::Ok);
    EXPECT_EQ(r.r0, strcmp(key.comm, "vm_test") == 0 ? 1u : 0u);
    ++want[log2_bucket(v)];
  }
  auto *count = static_cast<uint64_t *>(rt.map("counts").lookup(&key));
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(*count, std::size(values));
  uint32_t zero = 0;
  auto *buckets = static_cast<uint64_t *>(rt.map("hist").lookup(&zero));
  EXPECT_EQ(std::vector<uint64_t>(buckets, buckets + 66), want);
  auto &events = rt.map("events").records;
  ASSERT_EQ(events.size(), std::size(values));
  for (auto &e : events) {
    ASSERT_EQ(e.size(), 80u);
    uint64_t id, pid;
    memcpy(&id, e.data(), 8);
    memcpy(&pid, e.data() + 8, 8);
    EXPECT_EQ(id, 1u);
    EXPECT_EQ(pid, uint64_t(getpid()));
    EXPECT_STREQ(reinterpret_cast<const char *>(e.data() + 16), text);
  }
}

} // namespace
} // namespace ubtrace::vm::test
