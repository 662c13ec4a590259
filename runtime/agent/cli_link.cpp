#include "runtime/agent/cli_link.h"

#include "runtime/agent/protocol.h"
#include "runtime/proc_stat.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

namespace ubtrace::agent {
namespace {

// Raw system calls where the program may wrap the libc function (a library
// counting getppid() calls must not see the agent's).

// The credentials of the process at the other end of `fd` (for a listener:
// the one that called listen(); for a socketpair: the one that made it).
bool peer_is(int fd, pid_t pid, uid_t uid, bool check_uid) {
  struct ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
      len != sizeof cred)
    return false;
  return cred.pid == pid && (!check_uid || cred.uid == uid);
}

bool is_channel_socket(int fd) {
  struct stat st{};
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
    return false;
  int type = 0;
  socklen_t len = sizeof type;
  return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
         type == SOCK_SEQPACKET;
}

} // namespace

int spawned_channel() {
  const char *env = getenv(kFdEnv);
  if (!env)
    return -1;
  char *end = nullptr;
  long fd = strtol(env, &end, 10);
  bool parsed = end != env && *end == '\0' && fd >= 0 && fd < (1 << 30);
  // Children and exec'd programs must not reuse the channel.
  unsetenv(kFdEnv);
  if (!parsed || !is_channel_socket(int(fd)) ||
      !peer_is(int(fd), pid_t(syscall(SYS_getppid)), 0, false))
    return -1;
  int flags = fcntl(int(fd), F_GETFD);
  if (flags < 0)
    return -1;
  fcntl(int(fd), F_SETFD, flags | FD_CLOEXEC);
  return int(fd);
}

int attach_channel(const char *argument, bool follow) {
  AttachArgument a;
  if (!parse_attach_argument(argument, &a))
    return kInjectBadArgument;
  struct sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (a.address.size() >= sizeof addr.sun_path)
    return kInjectBadArgument;
  std::memcpy(addr.sun_path, a.address.data(), a.address.size());
  bool abstract = a.address[0] == '@';
  if (abstract)
    addr.sun_path[0] = '\0';
  socklen_t len =
      static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) +
                             a.address.size() + (abstract ? 0 : 1));
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return kInjectNoCli;
  if (connect(fd, reinterpret_cast<struct sockaddr *>(&addr), len) != 0) {
    close(fd);
    return kInjectNoCli;
  }
  // Whoever listens there must be the CLI that injected us: nothing is
  // sent to anyone else. A program in a PID namespace of its own (unshare
  // --fork --pid under --follow) sees the CLI's pid as 0.
  if (!peer_is(fd, pid_t(a.cli_pid), uid_t(a.cli_uid), true) &&
      !(follow && peer_is(fd, 0, uid_t(a.cli_uid), true))) {
    close(fd);
    return kInjectWrongPeer;
  }
  return fd;
}

int follow_channel(bool command) {
  const char *env = getenv(kFollowEnv);
  if (!env)
    return -1;
  // <token> <scope> <filters> <listener>: the scope is "tree" (--follow)
  // or the pid of the command whose own execs are followed; "command" is
  // the command's before it starts, not a program's it execs. <filters>:
  // the CLI's seccomp filters (-1: unknown).
  size_t len = strlen(env);
  bool well_formed = len > kFollowTokenHex + 1 && env[kFollowTokenHex] == ' ';
  for (size_t i = 0; well_formed && i < kFollowTokenHex; i++)
    well_formed =
        (env[i] >= '0' && env[i] <= '9') || (env[i] >= 'a' && env[i] <= 'f');
  const char *scope = env + kFollowTokenHex + 1;
  const char *filters = well_formed ? strchr(scope, ' ') : nullptr;
  char *listener = nullptr;
  long cli_filters = filters ? strtol(filters + 1, &listener, 10) : -1;
  bool ours = false;
  if (filters && listener != filters + 1 && *listener == ' ') {
    std::string s(scope, filters);
    ours = s == "tree" || s == std::to_string(syscall(SYS_getpid));
    // Only the command itself, the CLI's child: not a child it forked
    // before its agent ran, nor what that execs (system() in an
    // initialiser), which would wait for a Go that never comes while the
    // command waits for it.
    AttachArgument a;
    if (command && s == "command" && parse_attach_argument(listener + 1, &a))
      ours = long(a.cli_pid) == syscall(SYS_getppid);
  }
  // A seccomp filter that the trace did not start under came from the
  // tree (a sandbox, then an exec): it may kill on socket(), so the
  // program is left untraced (the CLI counts and says it). Filters only
  // stack up: as many as the CLI's are the CLI's own, which let it listen.
  if (ours && sandboxed_apart(seccomp_filters("self"), cli_filters))
    ours = false;
  int fd = ours ? attach_channel(listener + 1, true) : kInjectBadArgument;
  if (fd >= 0) {
    // The token, before anything else.
    Message m{MsgType::Follow, {env, env + kFollowTokenHex}, -1};
    if (send_message(fd, m))
      return fd;
    close(fd);
    fd = kInjectNoCli;
  }
  // No CLI to follow into: the trace is over (or out of reach). What this
  // program runs next is left alone.
  unsetenv(kFollowEnv);
  return fd;
}

} // namespace ubtrace::agent
