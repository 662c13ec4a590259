#include "ast/syscall_structs.h"

#include "ast/diagnostics.h"
#include "ast/passes/c_definitions.h"

#include <string_view>

namespace ubtrace::ast {
namespace {

// x86-64 layouts, as <linux/time_types.h>, <asm/stat.h>, <linux/socket.h>
// and friends declare them (long is 8 bytes). Each text defines what it
// needs first.
struct Known {
  std::string_view name; // without "struct "
  std::string_view text;
};
constexpr Known kKnown[] = {
    {"__kernel_timespec",
     "struct __kernel_timespec { long long tv_sec; long long tv_nsec; };"},
    {"__kernel_itimerspec",
     "struct __kernel_timespec { long long tv_sec; long long tv_nsec; };"
     "struct __kernel_itimerspec { struct __kernel_timespec it_interval;"
     " struct __kernel_timespec it_value; };"},
    {"__kernel_old_timeval",
     "struct __kernel_old_timeval { long tv_sec; long tv_usec; };"},
    {"__kernel_old_itimerval",
     "struct __kernel_old_timeval { long tv_sec; long tv_usec; };"
     "struct __kernel_old_itimerval { struct __kernel_old_timeval "
     "it_interval; struct __kernel_old_timeval it_value; };"},
    {"timezone", "struct timezone { int tz_minuteswest; int tz_dsttime; };"},
    {"iovec", "struct iovec { void *iov_base; unsigned long iov_len; };"},
    {"sockaddr",
     "struct sockaddr { unsigned short sa_family; char sa_data[14]; };"},
    {"pollfd", "struct pollfd { int fd; short events; short revents; };"},
    {"rlimit",
     "struct rlimit { unsigned long rlim_cur; unsigned long rlim_max; };"},
    {"rlimit64", "struct rlimit64 { unsigned long long rlim_cur;"
                 " unsigned long long rlim_max; };"},
    {"sched_param", "struct sched_param { int sched_priority; };"},
    {"open_how", "struct open_how { unsigned long long flags;"
                 " unsigned long long mode; unsigned long long resolve; };"},
    {"utimbuf", "struct utimbuf { long actime; long modtime; };"},
    {"tms", "struct tms { long tms_utime; long tms_stime; long tms_cutime;"
            " long tms_cstime; };"},
    {"stat",
     "struct stat { unsigned long st_dev; unsigned long st_ino;"
     " unsigned long st_nlink; unsigned int st_mode; unsigned int st_uid;"
     " unsigned int st_gid; unsigned int __pad0; unsigned long st_rdev;"
     " long st_size; long st_blksize; long st_blocks;"
     " unsigned long st_atime; unsigned long st_atime_nsec;"
     " unsigned long st_mtime; unsigned long st_mtime_nsec;"
     " unsigned long st_ctime; unsigned long st_ctime_nsec;"
     " long __unused[3]; };"},
    {"user_msghdr",
     "struct iovec { void *iov_base; unsigned long iov_len; };"
     "struct user_msghdr { void *msg_name; int msg_namelen;"
     " struct iovec *msg_iov; unsigned long msg_iovlen; void *msg_control;"
     " unsigned long msg_controllen; unsigned int msg_flags; };"},
    {"rusage",
     "struct __kernel_old_timeval { long tv_sec; long tv_usec; };"
     "struct rusage { struct __kernel_old_timeval ru_utime;"
     " struct __kernel_old_timeval ru_stime; long ru_maxrss; long ru_ixrss;"
     " long ru_idrss; long ru_isrss; long ru_minflt; long ru_majflt;"
     " long ru_nswap; long ru_inblock; long ru_oublock; long ru_msgsnd;"
     " long ru_msgrcv; long ru_nsignals; long ru_nvcsw; long ru_nivcsw; };"},
    {"new_utsname", "struct new_utsname { char sysname[65]; char nodename[65];"
                    " char release[65]; char version[65]; char machine[65];"
                    " char domainname[65]; };"},
    {"clone_args",
     "struct clone_args { unsigned long long flags; unsigned long long pidfd;"
     " unsigned long long child_tid; unsigned long long parent_tid;"
     " unsigned long long exit_signal; unsigned long long stack;"
     " unsigned long long stack_size; unsigned long long tls;"
     " unsigned long long set_tid; unsigned long long set_tid_size;"
     " unsigned long long cgroup; };"},
    {"sigaction", "struct sigaction { void *sa_handler; unsigned long sa_flags;"
                  " void *sa_restorer; unsigned long sa_mask; };"},
};

} // namespace

bool import_syscall_struct(const std::string &full, CTypes &types) {
  if (types.records.count(full))
    return true;
  for (const auto &k : kKnown) {
    if (full != "struct " + std::string(k.name))
      continue;
    CTypes scratch;
    Diagnostics diags;
    if (!parse_c_definitions(std::string(k.text), Location{}, scratch, diags))
      return false;
    for (auto &[name, type] : scratch.records)
      types.records.emplace(name, type); // the script's own stay
    return types.records.count(full) > 0;
  }
  return false;
}

Type syscall_struct_pointer(std::string_view decl, CTypes &types) {
  // "[const ]struct NAME *": one level of pointer to a named structure.
  constexpr std::string_view kConst = "const ", kStruct = "struct ";
  if (decl.substr(0, kConst.size()) == kConst)
    decl.remove_prefix(kConst.size());
  if (decl.substr(0, kStruct.size()) != kStruct)
    return Type{};
  decl.remove_prefix(kStruct.size());
  size_t star = decl.find(" *");
  if (star == std::string_view::npos || decl.substr(star) != " *")
    return Type{};
  std::string full = "struct " + std::string(decl.substr(0, star));
  if (!import_syscall_struct(full, types))
    return Type{};
  return make_pointer(types.records.at(full));
}

} // namespace ubtrace::ast
