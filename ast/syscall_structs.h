// The structures x86-64 Linux's system calls take pointers to, as the
// kernel lays them out (its UAPI headers), for the `args` of system call
// tracepoints: bpftrace types `args.rqtp` of nanosleep as a pointer to
// struct __kernel_timespec from the kernel's BTF; ubtrace has no BTF, so
// the layouts of the structures scripts read most are built in here.
// A script's own definition of one (or the traced binaries' DWARF) wins.
#pragma once

#include "ast/context.h"

#include <string>

namespace ubtrace::ast {

// Adds `full` ("struct __kernel_timespec") and the structures it holds to
// `types` when it is one of those built in and not defined there yet;
// whether `types` has it now.
bool import_syscall_struct(const std::string &full, CTypes &types);

// The type of a system call argument declared `decl` ("const struct
// __kernel_timespec *") when it points to such a structure: a pointer to
// it (imported into `types`); None otherwise.
Type syscall_struct_pointer(std::string_view decl, CTypes &types);

} // namespace ubtrace::ast
