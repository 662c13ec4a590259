// Notices the agent sends from program threads at moments where every
// libc function may carry one of the trace's probes (inside exit(), in a
// hooked dlclose's return): no lock, no allocation, no libc call. One
// SEQPACKET message per notice, sent with a raw sendmsg, is atomic against
// the channel thread's own sends.
//
// The channel is published to program threads by arm_raw_notices and
// withdrawn by disarm_raw_notices before it closes: a sender counts itself
// in before it loads the descriptor, and disarm waits for the count to
// drop, so a closing channel's descriptor number (soon the program's own)
// is never written to. Only the process that armed the channel sends (a
// forked child's copy does not), and only while the number is still the
// channel (a raw fstat checks its device and inode against those recorded
// when armed, as owned_fd.h checks its descriptors: the program may have
// closed it and reused the number).
#pragma once

#include "runtime/agent/protocol.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ubtrace::agent {

void arm_raw_notices(int sock);
// Once this returns no sender touches the socket any more.
void disarm_raw_notices();
// False when no channel is armed (or this is a forked child) or the send
// failed. Never blocks.
bool send_raw_notice(MsgType type, const uint8_t *payload, size_t size);

// The largest payload send_raw_notice takes.
inline constexpr size_t kRawNoticeMax = 1024;

// A notice the sending thread waits on until the CLI has acted on it (a
// library loaded: its probes hooked before its code runs). Each notice
// carries a ticket (u32, first in its payload) that the CLI's answer
// echoes; the channel thread acknowledges tickets in order. The wait is a
// futex, 2 s at most, and ends at once when the session ends.
struct TicketedNotices {
  std::atomic<uint32_t> sent{0};
  std::atomic<uint32_t> done{0}; // the futex word
};
// A session begins: nothing is owed from before.
void reset_tickets(TicketedNotices &t);
// Sends `type` with a new ticket, then `extra`, and waits; false when
// nothing was sent (no channel, a forked child).
bool notify_and_wait(TicketedNotices &t, MsgType type, const uint8_t *extra,
                     size_t size);
// The channel thread: the CLI answered `ticket` (and those before).
void acknowledge_ticket(TicketedNotices &t, uint32_t ticket);
// The session ends: waiters go on, and later notices do not wait.
void release_tickets(TicketedNotices &t);
// Waits that ended at the bound, unanswered (a CLI too slow or stopped):
// the calls into the library meanwhile may have been missed.
uint64_t notice_wait_timeouts();

} // namespace ubtrace::agent
