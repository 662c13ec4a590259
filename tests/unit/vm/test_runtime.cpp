#include "test_runtime.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

namespace ubtrace::vm::test {

std::vector<uint8_t> read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string prog_path(const std::string &name) {
  return std::string(UBT_VM_PROGS_DIR) + "/" + name + ".o";
}

// --- maps -------------------------------------------------------------------

HashMap::HashMap(const MapDef &def) : TestMap(def) {
  values_.resize(size_t(def.max_entries) * def.value_size);
  for (uint32_t i = def.max_entries; i-- > 0;)
    free_.push_back(i);
}

void *HashMap::lookup(const void *key) {
  auto it =
      index_.find(std::string(static_cast<const char *>(key), def_.key_size));
  if (it == index_.end())
    return nullptr;
  return values_.data() + size_t(it->second) * def_.value_size;
}

long HashMap::update(const void *key, const void *value, uint64_t flags) {
  std::string k(static_cast<const char *>(key), def_.key_size);
  auto it = index_.find(k);
  if (it != index_.end() && flags == BPF_NOEXIST)
    return -EEXIST;
  if (it == index_.end() && flags == BPF_EXIST)
    return -ENOENT;
  if (it == index_.end()) {
    if (free_.empty())
      return -E2BIG;
    it = index_.emplace(k, free_.back()).first;
    free_.pop_back();
  }
  memcpy(values_.data() + size_t(it->second) * def_.value_size, value,
         def_.value_size);
  return 0;
}

long HashMap::remove(const void *key) {
  auto it =
      index_.find(std::string(static_cast<const char *>(key), def_.key_size));
  if (it == index_.end())
    return -ENOENT;
  free_.push_back(it->second);
  index_.erase(it);
  return 0;
}

long HashMap::for_each(ForEachCallback cb, void *ctx) {
  // Snapshot so the callback may delete elements.
  std::vector<std::pair<std::string, uint32_t>> snapshot(index_.begin(),
                                                         index_.end());
  long visited = 0;
  for (auto &[key, slot] : snapshot) {
    if (!index_.count(key))
      continue;
    ++visited;
    if (cb(this, key.data(), values_.data() + size_t(slot) * def_.value_size,
           ctx))
      break;
  }
  return visited;
}

std::map<std::string, std::vector<uint8_t>> HashMap::entries() const {
  std::map<std::string, std::vector<uint8_t>> out;
  for (auto &[key, slot] : index_) {
    const uint8_t *v = values_.data() + size_t(slot) * def_.value_size;
    out[key] = std::vector<uint8_t>(v, v + def_.value_size);
  }
  return out;
}

ArrayMap::ArrayMap(const MapDef &def) : TestMap(def) {
  values_.resize(size_t(def.max_entries) * def.value_size);
  if (def.is_global_data)
    memcpy(values_.data(), def.initial_value.data(), def.initial_value.size());
}

void *ArrayMap::lookup(const void *key) {
  uint32_t index;
  memcpy(&index, key, sizeof(index));
  if (index >= def_.max_entries)
    return nullptr;
  return values_.data() + size_t(index) * def_.value_size;
}

long ArrayMap::update(const void *key, const void *value, uint64_t flags) {
  void *slot = lookup(key);
  if (!slot)
    return -E2BIG;
  if (flags == BPF_NOEXIST)
    return -EEXIST;
  memcpy(slot, value, def_.value_size);
  return 0;
}

long ArrayMap::remove(const void *) {
  return -EINVAL;
}

long ArrayMap::for_each(ForEachCallback cb, void *ctx) {
  long visited = 0;
  for (uint32_t i = 0; i < def_.max_entries; ++i) {
    ++visited;
    if (cb(this, &i, values_.data() + size_t(i) * def_.value_size, ctx))
      break;
  }
  return visited;
}

void *StreamMap::reserve(uint64_t size) {
  reserved_.emplace_back(size);
  return reserved_.back().data();
}

bool StreamMap::commit(void *data, bool keep) {
  for (auto it = reserved_.begin(); it != reserved_.end(); ++it) {
    if (it->data() != data)
      continue;
    if (keep)
      records.push_back(std::move(*it));
    reserved_.erase(it);
    return true;
  }
  return false;
}

std::unique_ptr<TestMap> make_map(const MapDef &def) {
  switch (def.type) {
  case BPF_MAP_TYPE_HASH:
  case BPF_MAP_TYPE_LRU_HASH:
  case BPF_MAP_TYPE_PERCPU_HASH:
  case BPF_MAP_TYPE_LRU_PERCPU_HASH:
    return std::make_unique<HashMap>(def);
  case BPF_MAP_TYPE_ARRAY:
  case BPF_MAP_TYPE_PERCPU_ARRAY:
    return std::make_unique<ArrayMap>(def);
  default:
    return std::make_unique<StreamMap>(def);
  }
}

// --- helpers ----------------------------------------------------------------

namespace {

TestMap *as_map(uint64_t handle) {
  return reinterpret_cast<TestMap *>(handle);
}
void *ptr(uint64_t v) {
  return reinterpret_cast<void *>(v);
}

uint64_t map_lookup_elem(uint64_t map, uint64_t key, uint64_t, uint64_t,
                         uint64_t) {
  return reinterpret_cast<uint64_t>(as_map(map)->lookup(ptr(key)));
}
uint64_t map_update_elem(uint64_t map, uint64_t key, uint64_t value,
                         uint64_t flags, uint64_t) {
  return uint64_t(as_map(map)->update(ptr(key), ptr(value), flags));
}
uint64_t map_delete_elem(uint64_t map, uint64_t key, uint64_t, uint64_t,
                         uint64_t) {
  return uint64_t(as_map(map)->remove(ptr(key)));
}

// Fault-safe copy from this process's memory, as probe_read must be.
bool read_memory(void *dst, uint64_t src, size_t size) {
  iovec local{dst, size};
  iovec remote{ptr(src), size};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == ssize_t(size);
}

uint64_t probe_read(uint64_t dst, uint64_t size, uint64_t src, uint64_t,
                    uint64_t) {
  if (read_memory(ptr(dst), src, size))
    return 0;
  memset(ptr(dst), 0, size);
  return uint64_t(-EFAULT);
}

uint64_t probe_read_str(uint64_t dst, uint64_t size, uint64_t src, uint64_t,
                        uint64_t) {
  auto *out = static_cast<char *>(ptr(dst));
  for (uint64_t i = 0; i < size; ++i) {
    char c;
    if (!read_memory(&c, src + i, 1)) {
      memset(out, 0, size);
      return uint64_t(-EFAULT);
    }
    if (i + 1 == size)
      c = 0;
    out[i] = c;
    if (c == 0)
      return i + 1;
  }
  return size;
}

uint64_t ktime_get_ns(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

uint64_t get_prandom_u32(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  thread_local uint64_t state = 0x9e3779b97f4a7c15u;
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return uint32_t(state);
}

uint64_t get_smp_processor_id(uint64_t, uint64_t, uint64_t, uint64_t,
                              uint64_t) {
  int cpu = sched_getcpu();
  return cpu < 0 ? 0 : uint64_t(cpu);
}

uint64_t get_current_pid_tgid(uint64_t, uint64_t, uint64_t, uint64_t,
                              uint64_t) {
  return uint64_t(getpid()) << 32 | uint64_t(gettid());
}

uint64_t get_current_uid_gid(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t) {
  return uint64_t(getgid()) << 32 | uint64_t(getuid());
}

uint64_t get_current_comm(uint64_t buf, uint64_t size, uint64_t, uint64_t,
                          uint64_t) {
  char name[17] = {};
  prctl(PR_GET_NAME, name);
  memset(ptr(buf), 0, size);
  strncpy(static_cast<char *>(ptr(buf)), name, size - 1);
  return 0;
}

// printf-like formatting with u64 arguments, for trace_printk/snprintf.
std::string format(const char *fmt, size_t fmt_size, const uint64_t *args,
                   size_t nargs) {
  std::string out;
  size_t next = 0;
  auto arg = [&]() { return next < nargs ? args[next++] : 0; };
  for (size_t i = 0; i < fmt_size && fmt[i]; ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    std::string spec = "%";
    while (++i < fmt_size && strchr("0123456789-lh", fmt[i]))
      if (fmt[i] != 'l' && fmt[i] != 'h')
        spec += fmt[i];
    if (i >= fmt_size)
      break;
    char conv = fmt[i];
    char buf[512];
    switch (conv) {
    case 'd':
    case 'i':
      snprintf(buf, sizeof(buf), (spec + "lld").c_str(), (long long)arg());
      break;
    case 'u':
      snprintf(buf, sizeof(buf), (spec + "llu").c_str(),
               (unsigned long long)arg());
      break;
    case 'x':
      snprintf(buf, sizeof(buf), (spec + "llx").c_str(),
               (unsigned long long)arg());
      break;
    case 'c':
      snprintf(buf, sizeof(buf), "%c", char(arg()));
      break;
    case 's': {
      char str[256] = {};
      uint64_t p = arg();
      probe_read_str(reinterpret_cast<uint64_t>(str), sizeof(str), p, 0, 0);
      snprintf(buf, sizeof(buf), (spec + "s").c_str(), str);
      break;
    }
    case '%':
      snprintf(buf, sizeof(buf), "%%");
      break;
    default:
      snprintf(buf, sizeof(buf), "<%c?>", conv);
      break;
    }
    out += buf;
  }
  return out;
}

uint64_t trace_printk(uint64_t fmt, uint64_t fmt_size, uint64_t a1, uint64_t a2,
                      uint64_t a3) {
  uint64_t args[3] = {a1, a2, a3};
  std::string line =
      format(static_cast<const char *>(ptr(fmt)), fmt_size, args, 3);
  printk_lines().push_back(line);
  return line.size();
}

uint64_t snprintf_helper(uint64_t str, uint64_t size, uint64_t fmt,
                         uint64_t data, uint64_t data_len) {
  std::string text =
      format(static_cast<const char *>(ptr(fmt)), 1024,
             static_cast<const uint64_t *>(ptr(data)), data_len / 8);
  if (size > 0) {
    size_t n = std::min<size_t>(text.size(), size - 1);
    memcpy(ptr(str), text.data(), n);
    static_cast<char *>(ptr(str))[n] = 0;
  }
  return text.size() + 1;
}

uint64_t ringbuf_output(uint64_t map, uint64_t data, uint64_t size, uint64_t,
                        uint64_t) {
  const auto *p = static_cast<const uint8_t *>(ptr(data));
  as_map(map)->records.emplace_back(p, p + size);
  return 0;
}

// Which ring each outstanding reservation came from.
thread_local std::map<void *, StreamMap *> reservations;

uint64_t ringbuf_reserve(uint64_t map, uint64_t size, uint64_t, uint64_t,
                         uint64_t) {
  auto *stream = dynamic_cast<StreamMap *>(as_map(map));
  if (!stream)
    return 0;
  void *data = stream->reserve(size);
  reservations[data] = stream;
  return reinterpret_cast<uint64_t>(data);
}

uint64_t ringbuf_commit(uint64_t data, bool keep) {
  auto it = reservations.find(ptr(data));
  if (it == reservations.end())
    return 0;
  it->second->commit(ptr(data), keep);
  reservations.erase(it);
  return 0;
}
uint64_t ringbuf_submit(uint64_t data, uint64_t, uint64_t, uint64_t, uint64_t) {
  return ringbuf_commit(data, true);
}
uint64_t ringbuf_discard(uint64_t data, uint64_t, uint64_t, uint64_t,
                         uint64_t) {
  return ringbuf_commit(data, false);
}

uint64_t perf_event_output(uint64_t, uint64_t map, uint64_t, uint64_t data,
                           uint64_t size) {
  return ringbuf_output(map, data, size, 0, 0);
}

} // namespace

std::vector<std::string> &printk_lines() {
  thread_local std::vector<std::string> lines;
  return lines;
}

const HelperImpls &test_helpers() {
  static const HelperImpls impls = [] {
    HelperImpls h;
    h.set(BPF_FUNC_map_lookup_elem, map_lookup_elem);
    h.set(BPF_FUNC_map_update_elem, map_update_elem);
    h.set(BPF_FUNC_map_delete_elem, map_delete_elem);
    h.set(BPF_FUNC_probe_read, probe_read);
    h.set(BPF_FUNC_probe_read_user, probe_read);
    h.set(BPF_FUNC_probe_read_kernel, probe_read);
    h.set(BPF_FUNC_probe_read_str, probe_read_str);
    h.set(BPF_FUNC_probe_read_user_str, probe_read_str);
    h.set(BPF_FUNC_probe_read_kernel_str, probe_read_str);
    h.set(BPF_FUNC_ktime_get_ns, ktime_get_ns);
    h.set(BPF_FUNC_ktime_get_boot_ns, ktime_get_ns);
    h.set(BPF_FUNC_get_prandom_u32, get_prandom_u32);
    h.set(BPF_FUNC_get_smp_processor_id, get_smp_processor_id);
    h.set(BPF_FUNC_get_current_pid_tgid, get_current_pid_tgid);
    h.set(BPF_FUNC_get_current_uid_gid, get_current_uid_gid);
    h.set(BPF_FUNC_get_current_comm, get_current_comm);
    h.set(BPF_FUNC_trace_printk, trace_printk);
    h.set(BPF_FUNC_snprintf, snprintf_helper);
    h.set(BPF_FUNC_ringbuf_output, ringbuf_output);
    h.set(BPF_FUNC_ringbuf_reserve, ringbuf_reserve);
    h.set(BPF_FUNC_ringbuf_submit, ringbuf_submit);
    h.set(BPF_FUNC_ringbuf_discard, ringbuf_discard);
    h.set(BPF_FUNC_perf_event_output, perf_event_output);
    return h;
  }();
  return impls;
}

// --- runtime ----------------------------------------------------------------

Runtime Runtime::from_object(Object object) {
  Runtime rt;
  rt.object_ = std::move(object);
  for (const MapDef &def : rt.object_.maps) {
    rt.maps_.push_back(make_map(def));
    TestMap *map = rt.maps_.back().get();
    MapBinding binding;
    binding.handle = reinterpret_cast<uint64_t>(map);
    binding.value_base = map->value_base();
    binding.for_each = [](void *m, ForEachCallback cb, void *ctx) {
      return static_cast<TestMap *>(m)->for_each(cb, ctx);
    };
    rt.bindings_.push_back(binding);
  }
  return rt;
}

Runtime Runtime::from_file(const std::string &prog_name) {
  auto object = load_object(read_file(prog_path(prog_name)));
  if (!object) {
    ADD_FAILURE() << prog_name << ": " << object.error();
    return Runtime{};
  }
  return from_object(std::move(*object));
}

Result<VerifiedProgram> Runtime::verify(const std::string &program,
                                        const ContextInfo &ctx,
                                        const VerifierOptions &options) const {
  const Program *prog = object_.find_program(program);
  if (!prog)
    return make_error("no program '" + program + "'");
  return vm::verify(*prog, object_.maps, standard_helpers(), ctx, options);
}

Result<BoundProgram> Runtime::prepare(const std::string &program,
                                      const ContextInfo &ctx,
                                      const VerifierOptions &options) const {
  auto verified = verify(program, ctx, options);
  if (!verified)
    return std::move(verified).take_error();
  return bind_program(*verified, bindings_, test_helpers());
}

TestMap &Runtime::map(const std::string &name) {
  auto index = object_.find_map(name);
  if (!index) {
    ADD_FAILURE() << "no map '" << name << "'";
    static ArrayMap none(MapDef{});
    return none;
  }
  return *maps_[*index];
}

} // namespace ubtrace::vm::test
