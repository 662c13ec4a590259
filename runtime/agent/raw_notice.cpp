// Built with -fno-builtin: the byte loop must stay a loop, never become a
// call to memcpy (which the trace may probe).
#include "runtime/agent/raw_notice.h"

#include <atomic>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/agent/raw_syscall.h"

namespace ubtrace::agent {
namespace {

std::atomic<int> g_sock{-1};
std::atomic<int> g_senders{0};
std::atomic<long> g_pid{0};

} // namespace

void arm_raw_notices(int sock) {
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
  if (size > kRawNoticeMax || raw_syscall(SYS_getpid) != g_pid.load(std::memory_order_relaxed))
    return false;
  bool sent = false;
  g_senders.fetch_add(1, std::memory_order_seq_cst);
  int sock = g_sock.load(std::memory_order_seq_cst);
  if (sock >= 0) {
    uint8_t message[sizeof(MsgHeader) + kRawNoticeMax];
    MsgHeader h{static_cast<uint32_t>(type), static_cast<uint32_t>(size)};
    volatile uint8_t *to = message;
    const uint8_t *hb = reinterpret_cast<const uint8_t *>(&h);
    for (size_t i = 0; i < sizeof h; i++)
      to[i] = hb[i];
    for (size_t i = 0; i < size; i++)
      to[sizeof h + i] = payload[i];
    struct iovec iov = {message, sizeof h + size};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    sent = raw_syscall(SYS_sendmsg, sock, reinterpret_cast<long>(&msg),
                       MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<long>(sizeof h + size);
  }
  g_senders.fetch_sub(1, std::memory_order_seq_cst);
  return sent;
}

} // namespace ubtrace::agent
