// What the VM tests run programs with: small real maps (a hash map, an
// array, a ring buffer), real helper implementations over them, and a
// harness that loads, verifies, binds and runs a program of a test object.
// The real shared-memory maps belong to runtime/maps; these only need to be
// correct, not fast.
#pragma once

#include "runtime/vm/interpreter.h"
#include "runtime/vm/loader.h"
#include "runtime/vm/verifier.h"

#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ubtrace::vm::test {

std::vector<uint8_t> read_file(const std::string &path);
// A test program object compiled at build time (progs/NAME.bpf.c).
std::string prog_path(const std::string &name);

class TestMap {
public:
  explicit TestMap(const MapDef &def) : def_(def) {}
  virtual ~TestMap() = default;
  const MapDef &def() const { return def_; }

  virtual void *lookup(const void *key) = 0;
  virtual long update(const void *key, const void *value, uint64_t flags) = 0;
  virtual long remove(const void *key) = 0;
  // Calls cb(map, key, value, ctx) per element until it returns nonzero.
  virtual long for_each(ForEachCallback cb, void *ctx) = 0;
  virtual void *value_base() { return nullptr; }
  // Records written by ringbuf/perf event helpers.
  std::vector<std::vector<uint8_t>> records;

protected:
  MapDef def_;
};

class HashMap : public TestMap {
public:
  explicit HashMap(const MapDef &def);
  void *lookup(const void *key) override;
  long update(const void *key, const void *value, uint64_t flags) override;
  long remove(const void *key) override;
  long for_each(ForEachCallback cb, void *ctx) override;
  size_t size() const { return index_.size(); }
  // Entries as (key bytes, value bytes), sorted by key.
  std::map<std::string, std::vector<uint8_t>> entries() const;

private:
  std::vector<uint8_t> values_;
  std::vector<uint32_t> free_;
  std::unordered_map<std::string, uint32_t> index_;
};

class ArrayMap : public TestMap {
public:
  explicit ArrayMap(const MapDef &def);
  void *lookup(const void *key) override;
  long update(const void *key, const void *value, uint64_t flags) override;
  long remove(const void *key) override;
  long for_each(ForEachCallback cb, void *ctx) override;
  void *value_base() override { return values_.data(); }

private:
  std::vector<uint8_t> values_;
};

// Ring buffers and perf event arrays: records only.
class StreamMap : public TestMap {
public:
  explicit StreamMap(const MapDef &def) : TestMap(def) {}
  void *lookup(const void *) override { return nullptr; }
  long update(const void *, const void *, uint64_t) override { return -22; }
  long remove(const void *) override { return -22; }
  long for_each(ForEachCallback, void *) override { return -22; }
  void *reserve(uint64_t size);
  bool commit(void *data, bool keep);

private:
  std::list<std::vector<uint8_t>> reserved_;
};

std::unique_ptr<TestMap> make_map(const MapDef &def);

// The helpers of standard_helpers() the tests can run, over TestMaps.
const HelperImpls &test_helpers();
// Lines printed by trace_printk on this thread.
std::vector<std::string> &printk_lines();

// A loaded object with a TestMap per map.
class Runtime {
public:
  static Runtime from_object(Object object);
  static Runtime from_file(const std::string &prog_name);

  Result<VerifiedProgram> verify(const std::string &program,
                                 const ContextInfo &ctx,
                                 const VerifierOptions &options = {}) const;
  Result<BoundProgram> prepare(const std::string &program,
                               const ContextInfo &ctx,
                               const VerifierOptions &options = {}) const;

  const Object &object() const { return object_; }
  TestMap &map(const std::string &name);
  const std::vector<MapBinding> &bindings() const { return bindings_; }
  // A global variable's storage, by name, or a data section's start.
  template <class T> T *global(const std::string &name) {
    if (const GlobalVar *g = object_.find_global(name))
      return reinterpret_cast<T *>(
          static_cast<uint8_t *>(maps_[g->map]->value_base()) + g->offset);
    return static_cast<T *>(map(name).value_base());
  }

private:
  Object object_;
  std::vector<std::unique_ptr<TestMap>> maps_;
  std::vector<MapBinding> bindings_;
};

} // namespace ubtrace::vm::test
