/* A stand-in for the real agent (runtime/agent/agent.cpp), speaking the
 * same channel contract (runtime/inject/channel.h) and the same framing as
 * runtime/agent/protocol.h: a SOCK_SEQPACKET message is a header {u32
 * type, u32 size} and a payload; Hello = type 1 with {u32 version = 1, u32
 * pid, u32 waiting, u32 pad}; Go = type 14. Only the tests' own message
 * (type 100, payload = a token) is made up.
 *
 * Constructor: with UBTRACE_AGENT_FD (-c): Hello (waiting = 1), then read
 * messages until Go, keeping the token; preload_probe's main prints what it
 * got. Without it (-p): connect to "@ubtrace-agent.<pid>" if someone
 * listens there and send Hello (waiting = 0).
 * UBT_TEST_AGENT_CTOR_MARKER=<file>: the constructor appends a line there.
 *
 * Entry ubtrace_agent_attach(arg), for the injector's entry-point option;
 * arg = directives separated by ';':
 *   file:<path>    append "attach pid=P tid=T calls=N" to path
 *   return:<n>     return n (default 0)
 *   raise:<sig>    kill(getpid(), sig)
 *   block:<path>   create path, then sleep forever
 *   exit:<code>    _exit(code)
 *   exec:<path>    execl(path, path, "2"): a new image (counter_loop 2)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int g_state; /* 1 hello sent, 2 go received */
static char g_token[128];
static int g_channel = -1;
static atomic_int g_attach_calls;

const char *ubt_test_agent_token(void) {
  return g_token;
}
int ubt_test_agent_state(void) {
  return g_state;
}
int ubt_test_agent_attach_calls(void) {
  return atomic_load(&g_attach_calls);
}

static int write_all(int fd, const void *data, size_t size) {
  const char *bytes = data;
  while (size > 0) {
    ssize_t n = write(fd, bytes, size);
    if (n <= 0)
      return -1;
    bytes += n;
    size -= (size_t)n;
  }
  return 0;
}

static void append_line(const char *path, const char *line) {
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0)
    return;
  write_all(fd, line, strlen(line));
  close(fd);
}

enum { kHello = 1, kGo = 14, kToken = 100 };

static void send_hello(int fd, uint32_t waiting) {
  uint32_t message[6] = {kHello, 16, 1, (uint32_t)getpid(), waiting, 0};
  send(fd, message, sizeof message, MSG_NOSIGNAL);
}

/* One message; returns its type, or -1 when the channel is closed. */
static int receive(int fd, char *payload, size_t capacity, size_t *size) {
  char buffer[4096];
  ssize_t n = recv(fd, buffer, sizeof buffer, 0);
  if (n < 8)
    return -1;
  uint32_t header[2];
  memcpy(header, buffer, sizeof header);
  size_t length = (size_t)n - 8 < capacity ? (size_t)n - 8 : capacity;
  memcpy(payload, buffer + 8, length);
  *size = length;
  return (int)header[0];
}

static int connect_to(const char *address);

__attribute__((constructor)) static void test_agent_init(void) {
  const char *marker = getenv("UBT_TEST_AGENT_CTOR_MARKER");
  if (marker) {
    char line[128];
    snprintf(line, sizeof line, "constructor pid=%d tid=%d\n", getpid(),
             gettid());
    append_line(marker, line);
  }
  const char *fd_text = getenv("UBTRACE_AGENT_FD");
  if (!fd_text) {
    char address[64];
    snprintf(address, sizeof address, "@ubtrace-agent.%d", getpid());
    int fd = connect_to(address);
    if (fd >= 0) {
      send_hello(fd, 0);
      g_channel = fd;
    }
    return;
  }
  int fd = atoi(fd_text);
  unsetenv("UBTRACE_AGENT_FD");
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  g_channel = fd;
  send_hello(fd, 1);
  g_state = 1;
  for (;;) {
    char payload[sizeof g_token];
    size_t size = 0;
    int type = receive(fd, payload, sizeof payload - 1, &size);
    if (type < 0)
      return; /* the CLI went away: run untraced */
    if (type == kToken) {
      memcpy(g_token, payload, size);
      g_token[size] = '\0';
    }
    if (type == kGo)
      break;
  }
  g_state = 2;
}

static int connect_to(const char *address) {
  struct sockaddr_un addr = {0};
  addr.sun_family = AF_UNIX;
  size_t length = strlen(address);
  if (length == 0 || length >= sizeof addr.sun_path)
    return -1;
  memcpy(addr.sun_path, address, length);
  socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length);
  if (address[0] == '@')
    addr.sun_path[0] = '\0';
  else
    size += 1;
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  if (connect(fd, (struct sockaddr *)&addr, size) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int ubtrace_agent_attach(const char *arg) {
  int calls = atomic_fetch_add(&g_attach_calls, 1) + 1;
  int result = 0;
  char copy[1024];
  snprintf(copy, sizeof copy, "%s", arg ? arg : "");
  char *save = NULL;
  for (char *item = strtok_r(copy, ";", &save); item;
       item = strtok_r(NULL, ";", &save)) {
    char *value = strchr(item, ':');
    if (!value)
      continue;
    *value++ = '\0';
    if (strcmp(item, "file") == 0) {
      char line[160];
      snprintf(line, sizeof line, "attach pid=%d tid=%d calls=%d\n", getpid(),
               gettid(), calls);
      append_line(value, line);
    } else if (strcmp(item, "return") == 0) {
      result = atoi(value);
    } else if (strcmp(item, "raise") == 0) {
      kill(getpid(), atoi(value));
    } else if (strcmp(item, "block") == 0) {
      append_line(value, "blocked\n");
      for (;;)
        pause();
    } else if (strcmp(item, "exit") == 0) {
      _exit(atoi(value));
    } else if (strcmp(item, "exec") == 0) {
      execl(value, value, "2", (char *)NULL);
      return -1;
    }
  }
  return result;
}
