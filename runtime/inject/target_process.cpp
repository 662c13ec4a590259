#include "runtime/inject/target_process.h"

#include "runtime/inject/attach_errors.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

// A small /proc file read with read(2): the kernel may answer ESRCH while
// the thread changes state, which libstdc++'s filebuf throws on (an
// injection once failed with "basic_filebuf::underflow ... No such
// process"); here that is an empty answer.
std::string read_proc_text(const std::string &path) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return out;
  char buf[1024];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && out.size() < 65536)
    out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

std::optional<std::string> status_line(pid_t pid, const std::string &field) {
  std::istringstream in(
      read_proc_text("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, field.size() + 1, field + ":") == 0)
      return line.substr(field.size() + 1);
  return std::nullopt;
}

} // namespace

Result<void> preflight(pid_t pid, bool held) {
  std::string who = "process " + std::to_string(pid);
  if (pid <= 0)
    return make_error("invalid process id " + std::to_string(pid));
  if (pid == ::getpid())
    return make_error("cannot inject into ubtrace itself");
  auto state = process_state(pid);
  if (!state)
    return make_error("no such process: " + std::to_string(pid));
  if (*state == 'Z' || *state == 'X')
    return make_error(who + " has exited");
  // Reading its maps needs the same rights as attaching, minus Yama: a
  // refusal here gets the full explanation rather than "cannot open".
  std::string maps = "/proc/" + std::to_string(pid) + "/maps";
  int fd = ::open(maps.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && (errno == EACCES || errno == EPERM))
    return make_error(explain_attach_failure(pid, EPERM));
  if (fd >= 0)
    ::close(fd);
  if (*state == 'T')
    return make_error(who +
                      " is stopped by job control; continue it "
                      "first (kill -CONT " +
                      std::to_string(pid) + ")");
  if (auto tracer = tracer_of(pid); tracer && *tracer != 0 && !held)
    return make_error("cannot attach to " + std::to_string(pid) +
                      ": it is already traced by process " +
                      std::to_string(*tracer) +
                      " (a debugger or another tracer)");
  if (auto features = status_line(pid, "x86_Thread_features");
      features && features->find("shstk") != std::string::npos)
    return make_error(who + " runs with a CET shadow stack, which the "
                            "injector does not support");
  // 32-bit programs: the ELF class of the executable, when readable.
  std::ifstream exe("/proc/" + std::to_string(pid) + "/exe", std::ios::binary);
  char ident[5] = {};
  if (exe.read(ident, sizeof ident) && ident[4] == 1 /* ELFCLASS32 */)
    return make_error(who + " is a 32-bit program: ubtrace traces x86-64 "
                            "programs only");
  return {};
}

// Thread ids of `pid`, the main thread first.
std::vector<pid_t> list_threads(pid_t pid) {
  std::vector<pid_t> tids;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return tids;
  while (dirent *entry = ::readdir(d)) {
    pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (tid > 0)
      tids.push_back(tid);
  }
  ::closedir(d);
  std::sort(tids.begin(), tids.end(), [pid](pid_t a, pid_t b) {
    return (a == pid) != (b == pid) ? a == pid : a < b;
  });
  return tids;
}

bool thread_exists(pid_t pid, pid_t tid) {
  std::string path =
      "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid);
  return ::access(path.c_str(), F_OK) == 0;
}

bool process_gone(pid_t pid) {
  auto state = process_state(pid);
  if (!state || *state == 'Z' || *state == 'X')
    return true;
  // Exiting but not yet a zombie: its memory is already gone.
  char exe[64];
  std::string link = "/proc/" + std::to_string(pid) + "/exe";
  return ::readlink(link.c_str(), exe, sizeof exe) < 0 && errno == ENOENT;
}

Error exited_error(pid_t pid) {
  return make_error("process " + std::to_string(pid) +
                    " exited during injection");
}

std::optional<long> blocked_call(pid_t pid, pid_t tid) {
  std::istringstream in(read_proc_text("/proc/" + std::to_string(pid) +
                                       "/task/" + std::to_string(tid) +
                                       "/syscall"));
  std::string first;
  if (!(in >> first) || first == "running" || first == "-1")
    return std::nullopt;
  char *end = nullptr;
  long nr = std::strtol(first.c_str(), &end, 10);
  if (!end || *end)
    return std::nullopt;
  return nr;
}

bool interrupt_fails_call(long nr) {
  switch (nr) {
  case SYS_epoll_wait:
  case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
  case SYS_epoll_pwait2:
#endif
  case SYS_rt_sigtimedwait:
  case SYS_io_getevents:
  case SYS_io_pgetevents:
    return true;
  default:
    return false;
  }
}

char thread_state(pid_t pid, pid_t tid) {
  std::string stat = read_proc_text("/proc/" + std::to_string(pid) + "/task/" +
                                    std::to_string(tid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2]
                                                               : '\0';
}

pid_t own_pid_seen_by(pid_t pid) {
  struct stat ours{}, theirs{};
  std::string path = "/proc/" + std::to_string(pid) + "/ns/pid";
  if (::stat("/proc/self/ns/pid", &ours) != 0 ||
      ::stat(path.c_str(), &theirs) != 0 || ours.st_ino != theirs.st_ino ||
      ours.st_dev != theirs.st_dev)
    return 0;
  return ::getpid();
}

} // namespace ubtrace::runtime::inject
