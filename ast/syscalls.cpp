#include "ast/syscalls.h"

#include "ast/ast.h"

#include <algorithm>
#include <fnmatch.h>

namespace ubtrace::ast {
namespace {

SyscallArg parse_arg(std::string_view row) {
  size_t a = row.find(';');
  size_t b = row.find(';', a + 1);
  return {row.substr(0, a), row.substr(a + 1, b - a - 1), row.substr(b + 1)};
}

template <class... Args>
SyscallInfo make_info(int nr, std::string_view name, int, Args... args) {
  SyscallInfo out;
  out.nr = nr;
  out.name = name;
  (out.args.push_back(parse_arg(args)), ...);
  return out;
}

// A field of gen_syscalls.py's kind.
Type field_type(std::string_view kind) {
  if (kind == "s")
    return make_pointer(make_int(1, true));
  if (kind == "S")
    return make_pointer(make_pointer(make_int(1, true)));
  if (kind == "p")
    return make_pointer(make_void());
  return make_int(static_cast<uint32_t>(kind[1] - '0'), kind[0] == 'i');
}

bool glob(std::string_view pattern, std::string_view text) {
  return fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) ==
         0;
}

} // namespace

const std::vector<SyscallInfo> &syscall_table() {
  static const auto *table = [] {
    auto *t = new std::vector<SyscallInfo>{
#define UBT_SYSCALL(nr, name, ...) make_info(nr, name, __VA_ARGS__),
#include "runtime/syscalls/syscalls.inc"
    };
    return t;
  }();
  return *table;
}

const SyscallInfo *find_syscall(std::string_view name) {
  for (const auto &s : syscall_table())
    if (s.name == name)
      return &s;
  return nullptr;
}

std::vector<SyscallEvent> match_syscall_events(std::string_view category,
                                               std::string_view event,
                                               std::string &error) {
  std::vector<SyscallEvent> out;
  bool any_category = false;
  if (glob(category, "raw_syscalls")) {
    any_category = true;
    for (bool exit : {false, true})
      if (glob(event, exit ? "sys_exit" : "sys_enter"))
        out.push_back({true, exit, nullptr});
  }
  if (glob(category, "syscalls")) {
    any_category = true;
    for (bool exit : {false, true})
      for (const auto &s : syscall_table())
        if (glob(event, std::string(exit ? "sys_exit_" : "sys_enter_") +
                            std::string(s.name)))
          out.push_back({false, exit, &s});
  }
  if (!any_category)
    error = "ubtrace runs the system call tracepoints (syscalls and "
            "raw_syscalls) inside the traced process; " +
            std::string(category) + " tracepoints need the kernel's";
  std::sort(out.begin(), out.end(),
            [](const SyscallEvent &a, const SyscallEvent &b) {
              return syscall_event_name(a) < syscall_event_name(b);
            });
  return out;
}

std::string syscall_event_name(const SyscallEvent &e) {
  if (e.raw)
    return e.exit ? "tracepoint:raw_syscalls:sys_exit"
                  : "tracepoint:raw_syscalls:sys_enter";
  return std::string(e.exit ? "tracepoint:syscalls:sys_exit_"
                            : "tracepoint:syscalls:sys_enter_") +
         std::string(e.call->name);
}

Type syscall_args_type(const SyscallEvent &e) {
  std::vector<std::string> names;
  std::vector<Type> types;
  if (e.raw) {
    names = {"id", e.exit ? "ret" : "args"};
    types = {make_int(8, true),
             e.exit ? make_int(8, true) : make_array(make_int(8, false), 6)};
  } else {
    names.push_back("__syscall_nr");
    types.push_back(make_int(4, true));
    if (e.exit) {
      names.push_back("ret");
      types.push_back(make_int(8, true));
    } else {
      for (const auto &a : e.call->args) {
        names.emplace_back(a.name);
        types.push_back(field_type(a.kind));
      }
    }
  }
  return make_record(std::move(names), std::move(types));
}

std::vector<SyscallEvent>
probe_syscall_events(const std::vector<AttachPoint *> &points) {
  std::vector<SyscallEvent> out;
  for (const auto *ap : points) {
    if (ap->kind != ProbeKind::Tracepoint)
      continue;
    std::string why;
    auto events = match_syscall_events(ap->target, ap->func, why);
    out.insert(out.end(), events.begin(), events.end());
  }
  return out;
}

SyscallArgsLayout syscall_args_layout(const std::vector<SyscallEvent> &events) {
  SyscallArgsLayout out;
  std::vector<std::string> names;
  std::vector<Type> types;
  std::vector<std::string> first_in; // the event that typed each field
  for (const auto &e : events) {
    Type t = syscall_args_type(e);
    for (size_t i = 0; i < t.fields.size(); i++) {
      const auto &f = t.fields[i];
      size_t j = std::find(names.begin(), names.end(), f.name) - names.begin();
      if (j == names.size()) {
        names.push_back(f.name);
        types.push_back(*f.type);
        first_in.push_back(syscall_event_name(e));
      } else if (same_type(types[j], *f.type)) {
        continue;
      } else if (types[j].is_int() && f.type->is_int()) {
        // flags is int in one call, unsigned in another: the register
        // whole, signed if either says so.
        types[j] = make_int(8, types[j].is_signed || f.type->is_signed);
      } else if (types[j].kind == TypeKind::Pointer &&
                 f.type->kind == TypeKind::Pointer) {
        types[j] = make_pointer(make_void());
      } else {
        out.error = "args." + f.name + " is " + type_str(types[j]) + " in " +
                    first_in[j] + " and " + type_str(*f.type) + " in " +
                    syscall_event_name(e) + "; split the probe";
        return out;
      }
    }
  }
  for (const auto &e : events) {
    Type t = syscall_args_type(e);
    std::vector<SyscallSource> src(names.size(), kSyscallAbsent);
    for (size_t i = 0; i < t.fields.size(); i++) {
      size_t j = std::find(names.begin(), names.end(), t.fields[i].name) -
                 names.begin();
      const std::string &name = t.fields[i].name;
      if (name == "__syscall_nr" || name == "id")
        src[j] = kSyscallNr;
      else if (name == "ret")
        src[j] = kSyscallRet;
      else if (e.raw)
        src[j] = kSyscallAllArgs;
      else
        src[j] = static_cast<SyscallSource>(kSyscallArg0 + (i - 1));
    }
    out.sources.push_back(std::move(src));
  }
  out.record = make_record(std::move(names), std::move(types));
  return out;
}

std::vector<std::string> syscall_arg_decls(const SyscallEvent &e) {
  if (e.raw)
    return {"long id", e.exit ? "long ret" : "unsigned long args[6]"};
  std::vector<std::string> out{"int __syscall_nr"};
  if (e.exit) {
    out.push_back("long ret");
    return out;
  }
  for (const auto &a : e.call->args)
    out.push_back(std::string(a.decl) + " " + std::string(a.name));
  return out;
}

} // namespace ubtrace::ast
