// The objects codegen emits are real BPF ELF objects: libbpf opens them and
// finds the BTF-defined maps the bundle describes; llvm-objdump disassembles
// them.
#include <bpf/libbpf.h>
#include <cereal/archives/binary.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <map>
#include <sstream>
#include <unistd.h>

#include "compile.h"
#include "runtime/abi.h"

namespace ubtrace {
namespace {

struct LibbpfObject {
  bpf_object *obj = nullptr;
  explicit LibbpfObject(const std::vector<uint8_t> &bytes) {
    LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "ubtrace");
    obj = bpf_object__open_mem(bytes.data(), bytes.size(), &opts);
    if (libbpf_get_error(obj))
      obj = nullptr;
  }
  ~LibbpfObject() {
    if (obj)
      bpf_object__close(obj);
  }
};

TEST(Codegen, LibbpfOpensTheObjectWithTheBundlesMaps) {
  codegen::Output out;
  std::string err;
  ASSERT_TRUE(test::compile(
      "BEGIN { @c = count(); @m[1, \"a\"] = 5; @h[2] = hist(10); exit(); }", out, err))
      << err;
  LibbpfObject o(out.bundle.object);
  ASSERT_NE(o.obj, nullptr);
  std::map<std::string, bpf_map *> maps;
  bpf_map *m;
  bpf_object__for_each_map(m, o.obj) maps[bpf_map__name(m)] = m;
  for (const auto &spec : out.bundle.maps) {
    SCOPED_TRACE(spec.name);
    ASSERT_TRUE(maps.count(spec.object_name));
    bpf_map *bm = maps[spec.object_name];
    EXPECT_EQ(bpf_map__max_entries(bm), spec.max_entries);
    if (spec.role != runtime::MapRole::Events) {
      EXPECT_EQ(bpf_map__key_size(bm), spec.key_size);
      EXPECT_EQ(bpf_map__value_size(bm), spec.value_size);
    }
  }
  // A scalar aggregation is one per-slot array entry; keyed ones hash.
  EXPECT_EQ(bpf_map__type(maps["AT_c"]), BPF_MAP_TYPE_PERCPU_ARRAY);
  EXPECT_EQ(bpf_map__type(maps["AT_h"]), BPF_MAP_TYPE_PERCPU_HASH);
  EXPECT_EQ(bpf_map__type(maps["AT_m"]), BPF_MAP_TYPE_HASH);
  EXPECT_EQ(bpf_map__type(maps[abi::kEventsMap]), BPF_MAP_TYPE_RINGBUF);
  // (int8, string[2]): the literal's smallest type, byte-aligned
  EXPECT_EQ(bpf_map__key_size(maps["AT_m"]), 3u);
  EXPECT_EQ(bpf_map__value_size(maps["AT_h"]), 8u * runtime::hist_buckets(0));
  // One program per probe, in the section the bundle names.
  int programs = 0;
  bpf_program *p;
  bpf_object__for_each_program(p, o.obj) {
    programs++;
    EXPECT_EQ(bpf_program__section_name(p), out.bundle.probes[0].section);
  }
  EXPECT_EQ(programs, 1);
}

TEST(Codegen, ProbeSpecsDescribeEachAttachPoint) {
  codegen::Output out;
  std::string err;
  ASSERT_TRUE(test::compile("BEGIN { } interval:ms:250 { } "
                            "uprobe:/bin/ls:main, uretprobe:/bin/ls:main { } "
                            "usdt:/bin/ls:prov:name { } kernel::vecAdd { }",
                            out, err))
      << err;
  auto &p = out.bundle.probes;
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0].kind, runtime::ProbeKind::Begin);
  EXPECT_EQ(p[1].kind, runtime::ProbeKind::Interval);
  EXPECT_EQ(p[1].interval_ns, 250000000u);
  EXPECT_EQ(p[2].kind, runtime::ProbeKind::Uprobe);
  EXPECT_EQ(p[2].target, "/bin/ls");
  EXPECT_EQ(p[2].function, "main");
  EXPECT_EQ(p[3].kind, runtime::ProbeKind::Uretprobe);
  EXPECT_EQ(p[2].section, p[3].section); // one program, two attach points
  EXPECT_EQ(p[4].kind, runtime::ProbeKind::Usdt);
  EXPECT_EQ(p[4].provider, "prov");
  EXPECT_EQ(p[5].kind, runtime::ProbeKind::GpuKernelEntry);
  EXPECT_EQ(p[5].function, "vecAdd");
}

TEST(Codegen, PrintfFormatsAndArgumentLayout) {
  codegen::Output out;
  std::string err;
  ASSERT_TRUE(test::compile("BEGIN { printf(\"%d %s %d\\n\", 1, comm, (uint8)7); }", out,
                            err))
      << err;
  ASSERT_EQ(out.bundle.printf_formats.size(), 1u);
  const auto &f = out.bundle.printf_formats[0];
  EXPECT_EQ(f.format, "%d %s %d\n");
  ASSERT_EQ(f.args.size(), 3u);
  EXPECT_EQ(f.args[0].offset, 0u);
  EXPECT_EQ(f.args[1].offset, 8u);
  EXPECT_EQ(f.args[1].type.kind, runtime::ValueType::Kind::String);
  EXPECT_EQ(f.args[1].type.size, 16u);
  EXPECT_EQ(f.args[2].offset, 24u); // integers travel as 64-bit values
}

TEST(Codegen, LlvmObjdumpDisassemblesTheObject) {
  codegen::Output out;
  std::string err;
  ASSERT_TRUE(test::compile("BEGIN { @x[pid] = count(); }", out, err)) << err;
  char path[] = "/tmp/ubtrace-objdump-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, out.bundle.object.data(), out.bundle.object.size()),
            static_cast<ssize_t>(out.bundle.object.size()));
  close(fd);
  std::string cmd = std::string(UBTRACE_OBJDUMP) + " -d " + path + " 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    text.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << text;
  unlink(path);
  EXPECT_NE(text.find("call 0x1"), std::string::npos) << text; // map_lookup_elem
  EXPECT_NE(text.find("exit"), std::string::npos) << text;
  // Our own disassembler agrees on the helper call.
  EXPECT_NE(out.disasm.find("call 1"), std::string::npos) << out.disasm;
}

// The bundle carries the config typed, and the whole bundle (its config
// with it) goes through cereal and comes back the same.
TEST(Codegen, TheBundleCarriesTheConfigTypedThroughCereal) {
  codegen::Output out;
  std::string err;
  ASSERT_TRUE(test::compile(
      "config = { max_strlen = 32; stack_mode = raw; cpp_demangle = false; "
      "str_trunc_trailer = \"~\"; missing_probes = warn } "
      "BEGIN { @m[1] = 1; exit(); }",
      out, err))
      << err;
  const runtime::Config &c = out.bundle.config;
  EXPECT_EQ(c.max_strlen, 32u);
  EXPECT_EQ(c.stack_mode, runtime::StackMode::Raw);
  EXPECT_FALSE(c.cpp_demangle);
  EXPECT_EQ(c.str_trunc_trailer, "~");
  EXPECT_EQ(c.missing_probes, runtime::MissingProbes::Warn);
  EXPECT_EQ(c.max_map_keys, 4096u);
  std::stringstream bytes;
  {
    cereal::BinaryOutputArchive ar(bytes);
    ar(out.bundle);
  }
  runtime::Bundle back;
  {
    cereal::BinaryInputArchive ar(bytes);
    ar(back);
  }
  EXPECT_EQ(back.config, c);
  EXPECT_EQ(back.object, out.bundle.object);
  ASSERT_EQ(back.maps.size(), out.bundle.maps.size());
  for (size_t i = 0; i < back.maps.size(); i++)
    EXPECT_EQ(back.maps[i].max_entries, out.bundle.maps[i].max_entries);
}

} // namespace
} // namespace ubtrace
