// Built with -fno-builtin: the byte loop must stay a loop, never become a
// call to memcpy (which the trace may probe).
#include "runtime/agent/raw_notice.h"

#include "runtime/agent/raw_syscall.h"
#include "runtime/agent/syscalls.h"

#include <atomic>
#include <climits>
#include <ctime>
#include <linux/futex.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

namespace ubtrace::agent {
namespace {

std::atomic<int> g_sock{-1};
std::atomic<int> g_senders{0};
std::atomic<long> g_pid{0};
// What the channel is: written before g_sock publishes it.
dev_t g_dev = 0;
ino_t g_ino = 0;

bool still_the_channel(int sock) {
  struct stat st;
  return raw_syscall(SYS_fstat, sock, reinterpret_cast<long>(&st)) == 0 &&
         st.st_dev == g_dev && st.st_ino == g_ino;
}

} // namespace

void arm_raw_notices(int sock) {
  struct stat st{};
  if (sock < 0 || fstat(sock, &st) != 0)
    return;
  g_dev = st.st_dev;
  g_ino = st.st_ino;
  g_pid.store(getpid(), std::memory_order_seq_cst);
  g_sock.store(sock, std::memory_order_seq_cst);
}

void disarm_raw_notices() {
  g_sock.store(-1, std::memory_order_seq_cst);
  // A sender that loaded the socket before the store finishes its send.
  while (g_senders.load(std::memory_order_seq_cst))
    __builtin_ia32_pause();
}

bool send_raw_notice(MsgType type, const uint8_t *payload, size_t size) {
  syscalls::OwnCalls own; // ubtrace's calls, not the program's
  if (size > kRawNoticeMax ||
      raw_syscall(SYS_getpid) != g_pid.load(std::memory_order_relaxed))
    return false;
  bool sent = false;
  g_senders.fetch_add(1, std::memory_order_seq_cst);
  int sock = g_sock.load(std::memory_order_seq_cst);
  if (sock >= 0 && still_the_channel(sock)) {
    uint8_t message[sizeof(MsgHeader) + kRawNoticeMax];
    MsgHeader h{static_cast<uint32_t>(type), static_cast<uint32_t>(size)};
    copy_without_libc(message, &h, sizeof h);
    copy_without_libc(message + sizeof h, payload, size);
    struct iovec iov = {message, sizeof h + size};
    struct msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    sent = raw_syscall(SYS_sendmsg, sock, reinterpret_cast<long>(&msg),
                       MSG_NOSIGNAL | MSG_DONTWAIT) ==
           static_cast<long>(sizeof h + size);
  }
  g_senders.fetch_sub(1, std::memory_order_seq_cst);
  return sent;
}

namespace {

constexpr uint32_t kReleased = 0xffffffffu;

std::atomic<uint64_t> g_wait_timeouts{0};

void wake(TicketedNotices &t) {
  (void)raw_syscall(SYS_futex, reinterpret_cast<long>(&t.done),
                    FUTEX_WAKE_PRIVATE, INT32_MAX);
}

} // namespace

void reset_tickets(TicketedNotices &t) {
  t.done.store(t.sent.load(std::memory_order_relaxed),
               std::memory_order_release);
}

bool notify_and_wait(TicketedNotices &t, MsgType type, const uint8_t *extra,
                     size_t size) {
  if (size > kRawNoticeMax - sizeof(uint32_t))
    size = kRawNoticeMax - sizeof(uint32_t);
  uint32_t ticket = t.sent.fetch_add(1, std::memory_order_relaxed) + 1;
  uint8_t payload[kRawNoticeMax];
  copy_without_libc(payload, &ticket, sizeof ticket);
  copy_without_libc(payload + sizeof ticket, extra, size);
  if (!send_raw_notice(type, payload, sizeof ticket + size))
    return false;
  for (int round = 0;; round++) { // 10 ms a wait, 2 s in all
    uint32_t done = t.done.load(std::memory_order_acquire);
    if (done == kReleased || static_cast<int32_t>(done - ticket) >= 0)
      break;
    if (round == 200) {
      g_wait_timeouts.fetch_add(1, std::memory_order_relaxed);
      break;
    }
    struct timespec left = {0, 10000000};
    (void)raw_syscall(SYS_futex, reinterpret_cast<long>(&t.done),
                      FUTEX_WAIT_PRIVATE, done, reinterpret_cast<long>(&left));
  }
  return true;
}

uint64_t notice_wait_timeouts() {
  return g_wait_timeouts.load(std::memory_order_relaxed);
}

void acknowledge_ticket(TicketedNotices &t, uint32_t ticket) {
  uint32_t done = t.done.load(std::memory_order_relaxed);
  if (done != kReleased && static_cast<int32_t>(ticket - done) > 0)
    t.done.store(ticket, std::memory_order_release);
  wake(t);
}

void release_tickets(TicketedNotices &t) {
  t.done.store(kReleased, std::memory_order_release);
  wake(t);
}

} // namespace ubtrace::agent
