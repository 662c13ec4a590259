#include "runtime/vm/loader/btf_maps.h"

#include <bpf/btf.h>
#include <cstring>
#include <memory>

namespace ubtrace::vm::loader {
namespace {

struct BtfFree {
  void operator()(struct btf *btf) const { btf__free(btf); }
};

const btf_type *skip_modifiers(const struct btf *btf, uint32_t id,
                               uint32_t *out_id = nullptr) {
  const btf_type *t = btf__type_by_id(btf, id);
  while (t && (btf_is_typedef(t) || btf_is_const(t) || btf_is_volatile(t) ||
               btf_is_restrict(t))) {
    id = t->type;
    t = btf__type_by_id(btf, id);
  }
  if (out_id)
    *out_id = id;
  return t;
}

// `__uint(name, N)` is `int (*name)[N]`: N is the array's element count.
Result<uint32_t> uint_member(const struct btf *btf, const btf_member &m,
                             const std::string &map, const char *field) {
  const btf_type *ptr = skip_modifiers(btf, m.type);
  const btf_type *arr =
      ptr && btf_is_ptr(ptr) ? skip_modifiers(btf, ptr->type) : nullptr;
  if (!arr || !btf_is_array(arr))
    return make_error("map '" + map + "': field '" + field +
                      "' is not declared with __uint()");
  return btf_array(arr)->nelems;
}

// `__type(name, T)` is `T *name`: the size of T.
Result<uint32_t> type_member_size(const struct btf *btf, const btf_member &m,
                                  const std::string &map, const char *field) {
  const btf_type *ptr = skip_modifiers(btf, m.type);
  if (!ptr || !btf_is_ptr(ptr))
    return make_error("map '" + map + "': field '" + field +
                      "' is not declared with __type()");
  long long size = btf__resolve_size(btf, ptr->type);
  if (size < 0)
    return make_error("map '" + map + "': cannot size the type of '" + field +
                      "'");
  return static_cast<uint32_t>(size);
}

Result<BtfMapDef> parse_map(const struct btf *btf, const btf_var_secinfo &var) {
  const btf_type *var_type = btf__type_by_id(btf, var.type);
  if (!var_type || !btf_is_var(var_type))
    return make_error(".maps holds something that is not a variable");
  BtfMapDef def;
  def.name = btf__name_by_offset(btf, var_type->name_off);
  const btf_type *st = skip_modifiers(btf, var_type->type);
  if (!st || !btf_is_struct(st))
    return make_error("map '" + def.name + "' is not a struct definition");
  bool key_sized = false, value_sized = false;
  const btf_member *members = btf_members(st);
  for (int i = 0; i < btf_vlen(st); ++i) {
    const btf_member &m = members[i];
    std::string field = btf__name_by_offset(btf, m.name_off);
    auto want_uint = [&](uint32_t &out) -> Result<void> {
      auto v = uint_member(btf, m, def.name, field.c_str());
      if (!v)
        return std::move(v).take_error();
      out = *v;
      return {};
    };
    Result<void> r;
    if (field == "type") {
      r = want_uint(def.type);
    } else if (field == "max_entries") {
      r = want_uint(def.max_entries);
    } else if (field == "map_flags") {
      r = want_uint(def.flags);
    } else if (field == "key_size" || field == "value_size") {
      bool is_key = field == "key_size";
      uint32_t size = 0;
      r = want_uint(size);
      uint32_t &slot = is_key ? def.key_size : def.value_size;
      bool &sized = is_key ? key_sized : value_sized;
      if (r && sized && slot != size)
        return make_error("map '" + def.name + "': conflicting " + field);
      slot = size;
      sized = true;
    } else if (field == "key" || field == "value") {
      bool is_key = field == "key";
      auto size = type_member_size(btf, m, def.name, field.c_str());
      if (!size)
        return std::move(size).take_error();
      uint32_t &slot = is_key ? def.key_size : def.value_size;
      bool &sized = is_key ? key_sized : value_sized;
      if (sized && slot != *size)
        return make_error("map '" + def.name + "': " + field + " type and " +
                          field + "_size disagree");
      slot = *size;
      sized = true;
    } else if (field == "values") {
      return make_error("map '" + def.name +
                        "': map-in-map definitions are not supported");
    } else if (field == "numa_node" || field == "pinning" ||
               field == "map_extra") {
      // Kernel placement hints: meaningless for shared-memory maps.
    } else {
      return make_error("map '" + def.name + "': unknown field '" + field +
                        "'");
    }
    if (!r)
      return std::move(r).take_error();
  }
  if (def.type == 0)
    return make_error("map '" + def.name + "' has no type");
  return def;
}

} // namespace

Result<std::vector<BtfMapDef>> parse_btf_maps(std::span<const uint8_t> bytes) {
  std::unique_ptr<struct btf, BtfFree> btf(
      btf__new(bytes.data(), static_cast<uint32_t>(bytes.size())));
  if (!btf)
    return make_error("cannot parse .BTF: " + std::string(strerror(errno)));
  std::vector<BtfMapDef> maps;
  uint32_t count = btf__type_cnt(btf.get());
  for (uint32_t id = 1; id < count; ++id) {
    const btf_type *t = btf__type_by_id(btf.get(), id);
    if (!btf_is_datasec(t) ||
        strcmp(btf__name_by_offset(btf.get(), t->name_off), ".maps") != 0)
      continue;
    const btf_var_secinfo *vars = btf_var_secinfos(t);
    for (int i = 0; i < btf_vlen(t); ++i) {
      auto def = parse_map(btf.get(), vars[i]);
      if (!def)
        return std::move(def).take_error();
      maps.push_back(std::move(*def));
    }
  }
  return maps;
}

} // namespace ubtrace::vm::loader
