#include "runtime/gpu/fatbin.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/fatbin_format.h"
#include "runtime/gpu/fatbin_writer.h"

#include <gtest/gtest.h>
#include <lz4.h>
#include <string>
#include <zstd.h>

namespace ubtrace::runtime::gpu {
namespace {

std::string sample_ptx() {
  std::string ptx = ".version 9.0\n.target sm_90\n.address_size 64\n";
  for (int i = 0; i < 50; ++i)
    ptx += ".visible .entry k" + std::to_string(i) + "()\n{\n\tret;\n}\n";
  return ptx;
}

TEST(Fatbin, WrittenEntriesReadBackWithAllTheirFields) {
  std::string ptx = sample_ptx();
  std::vector<uint8_t> elf(333, 0x5a);
  FatbinEntrySpec specs[2];
  specs[0].raw_kind = kEntryKindPtx;
  specs[0].sm_arch = 90;
  specs[0].version_major = 9;
  specs[0].version_minor = 0;
  specs[0].options = "-O1 -lineinfo";
  specs[0].name = "kernels.cu";
  specs[0].contents = as_bytes(ptx.data(), ptx.size());
  specs[1].raw_kind = kEntryKindElf;
  specs[1].sm_arch = 80;
  specs[1].version_major = 1;
  specs[1].version_minor = 8;
  specs[1].flags |= entry_flag::kCompressedZstd; // dropped: written plain
  specs[1].contents = elf;
  std::vector<uint8_t> out = write_fatbin(specs);

  auto fatbin = parse_fatbin(out);
  ASSERT_TRUE(fatbin) << fatbin.error();
  EXPECT_EQ(fatbin->bytes.size(), out.size());
  ASSERT_EQ(fatbin->entries.size(), 2u);
  const FatbinEntry &p = fatbin->entries[0];
  EXPECT_EQ(p.kind, EntryKind::Ptx);
  EXPECT_EQ(p.sm_arch, 90u);
  EXPECT_EQ(p.version_major, 9u);
  EXPECT_EQ(p.name, "kernels.cu");
  EXPECT_EQ(p.options, "-O1 -lineinfo");
  EXPECT_FALSE(p.is_compressed());
  EXPECT_EQ(p.header.size() % 8, 0u);
  auto text = entry_ptx(p);
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(*text, ptx);
  const FatbinEntry &e = fatbin->entries[1];
  EXPECT_EQ(e.kind, EntryKind::Cubin);
  EXPECT_EQ(e.sm_arch, 80u);
  EXPECT_FALSE(e.is_compressed());
  EXPECT_EQ(e.header.size(), kFatbinEntryFixedSize); // no options block
  auto contents = entry_contents(e);
  ASSERT_TRUE(contents);
  // The payload is padded to 8 with zeros.
  ASSERT_EQ(contents->size(), align_up(elf.size(), 8));
  EXPECT_TRUE(std::equal(elf.begin(), elf.end(), contents->begin()));
  EXPECT_EQ(contents->back(), 0);
}

// Builds a one-entry fatbin whose PTX is stored compressed, the way nvcc
// lays compressed entries out.
std::vector<uint8_t> compressed_fatbin(const std::string &ptx,
                                       Compression compression) {
  std::string with_nul = ptx + '\0';
  std::vector<uint8_t> stored(ZSTD_compressBound(with_nul.size()) +
                              LZ4_compressBound(with_nul.size()));
  size_t size = 0;
  uint64_t flag = 0;
  if (compression == Compression::Zstd) {
    size = ZSTD_compress(stored.data(), stored.size(), with_nul.data(),
                         with_nul.size(), 3);
    flag = entry_flag::kCompressedZstd;
  } else {
    size = LZ4_compress_default(
        with_nul.data(), reinterpret_cast<char *>(stored.data()),
        static_cast<int>(with_nul.size()), static_cast<int>(stored.size()));
    flag = entry_flag::kCompressedLz4;
  }
  stored.resize(size);
  FatbinEntrySpec spec;
  spec.sm_arch = 90;
  spec.raw_kind = kEntryKindElf; // no NUL added to the stored bytes
  spec.contents = stored;
  std::vector<uint8_t> out = write_fatbin({&spec, 1});
  // Patch the entry into a compressed PTX one.
  uint8_t *h = out.data() + kFatbinHeaderSize;
  store_le<uint16_t>(h + entry_field::kKind, kEntryKindPtx);
  store_le<uint32_t>(h + entry_field::kCompressedSize,
                     static_cast<uint32_t>(size));
  store_le<uint64_t>(h + entry_field::kUncompressedSize, with_nul.size());
  store_le<uint64_t>(h + entry_field::kFlags,
                     entry_flag::k64Bit | entry_flag::kLinux | flag);
  return out;
}

TEST(Fatbin, DecompressesZstdAndLz4Entries) {
  std::string ptx = sample_ptx();
  for (Compression c : {Compression::Zstd, Compression::Lz4}) {
    SCOPED_TRACE(compression_name(c));
    std::vector<uint8_t> fb = compressed_fatbin(ptx, c);
    auto parsed = parse_fatbin(fb);
    ASSERT_TRUE(parsed) << parsed.error();
    const FatbinEntry &e = parsed->entries.at(0);
    EXPECT_EQ(e.compression, c);
    EXPECT_LT(e.stored.size(), ptx.size());
    auto text = entry_ptx(e);
    ASSERT_TRUE(text) << text.error();
    EXPECT_EQ(*text, ptx);
  }
}

TEST(Fatbin, CorruptCompressedDataIsAnError) {
  std::string ptx = sample_ptx();
  for (Compression c : {Compression::Zstd, Compression::Lz4}) {
    SCOPED_TRACE(compression_name(c));
    std::vector<uint8_t> fb = compressed_fatbin(ptx, c);
    auto parsed = parse_fatbin(fb);
    ASSERT_TRUE(parsed);
    const FatbinEntry &e = parsed->entries.at(0);
    // A wrong uncompressed size is caught.
    auto wrong = decompress(c, e.stored, e.uncompressed_size + 5);
    EXPECT_FALSE(wrong);
    // So are damaged bytes.
    std::vector<uint8_t> damaged(e.stored.begin(), e.stored.end());
    for (size_t i = 0; i < damaged.size(); i += 3)
      damaged[i] ^= 0xa5;
    auto bad = decompress(c, damaged, e.uncompressed_size);
    EXPECT_FALSE(bad);
  }
}

TEST(Fatbin, SequenceAllowsZeroPaddingBetweenContainers) {
  std::string ptx = sample_ptx();
  FatbinEntrySpec spec;
  spec.sm_arch = 90;
  spec.contents = as_bytes(ptx.data(), ptx.size());
  std::vector<uint8_t> one = write_fatbin({&spec, 1});
  std::vector<uint8_t> region = one;
  region.resize(region.size() + 16, 0);
  region.insert(region.end(), one.begin(), one.end());
  region.resize(region.size() + 8, 0);
  auto all = parse_fatbin_sequence(region);
  ASSERT_TRUE(all) << all.error();
  EXPECT_EQ(all->size(), 2u);
  region[one.size() + 4] = 1; // junk between containers
  EXPECT_FALSE(parse_fatbin_sequence(region));
}

TEST(Fatbin, TruncatedOrForeignDataIsAnError) {
  std::string ptx = sample_ptx();
  FatbinEntrySpec spec;
  spec.sm_arch = 90;
  spec.contents = as_bytes(ptx.data(), ptx.size());
  std::vector<uint8_t> fb = write_fatbin({&spec, 1});
  EXPECT_FALSE(parse_fatbin(Bytes(fb.data(), fb.size() - 1)));
  EXPECT_FALSE(parse_fatbin(Bytes(fb.data(), 10)));
  std::vector<uint8_t> bad_header = fb;
  store_le<uint32_t>(bad_header.data() + kFatbinHeaderSize +
                         entry_field::kHeaderSize,
                     1u << 30);
  EXPECT_FALSE(parse_fatbin(bad_header));
  std::vector<uint8_t> both = fb;
  store_le<uint64_t>(both.data() + kFatbinHeaderSize + entry_field::kFlags,
                     entry_flag::kCompressedLz4 | entry_flag::kCompressedZstd);
  EXPECT_FALSE(parse_fatbin(both));
  std::vector<uint8_t> junk(64, 0x11);
  auto r = parse_fatbin(junk);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("no fatbin magic"), std::string::npos);
}

TEST(Fatbin, ReplacementEntryKeepsTheOriginalsIdentity) {
  std::string ptx = sample_ptx();
  FatbinEntrySpec spec;
  spec.sm_arch = 86;
  spec.version_major = 8;
  spec.version_minor = 4;
  spec.flags |= entry_flag::kDebug;
  spec.options = "-g";
  spec.contents = as_bytes(ptx.data(), ptx.size());
  std::vector<uint8_t> fb = write_fatbin({&spec, 1});
  auto parsed = parse_fatbin(fb);
  ASSERT_TRUE(parsed);
  std::string rewritten = ptx + "// more\n";
  FatbinEntrySpec repl =
      replacement_ptx_entry(parsed->entries[0], rewritten, 9, 0);
  // The parsed entries view the bytes they were parsed from: keep them.
  std::vector<uint8_t> written = write_fatbin({&repl, 1});
  auto again = parse_fatbin(written);
  ASSERT_TRUE(again);
  const FatbinEntry &e = again->entries[0];
  EXPECT_EQ(e.sm_arch, 86u);
  EXPECT_EQ(e.version_major, 9u);
  EXPECT_EQ(e.version_minor, 0u);
  EXPECT_TRUE(e.flags & entry_flag::kDebug);
  EXPECT_EQ(e.options, "-g");
  auto text = entry_ptx(e);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, rewritten);
}

} // namespace
} // namespace ubtrace::runtime::gpu
