// How the agent reaches the CLI that started or injected it, and makes sure
// it is that CLI before it says a word (protocol.h, "How the agent finds the
// channel"). Runs in the constructor (-c) or the inject entry (-p), never on
// the probe path.
#pragma once

namespace ubtrace::agent {

// -c: the descriptor UBTRACE_AGENT_FD names (the variable is removed from
// the environment either way), if it is a SOCK_SEQPACKET unix socket whose
// peer is this process's parent (the CLI that spawned it); else -1, and the
// descriptor, not being the agent's, is left alone.
int spawned_channel();

// -p: connects to the listener named by `argument` (an encoded
// AttachArgument) and checks its credentials (`follow`: a listener whose
// pid this process cannot see, pid 0, passes on its uid alone). The connected
// socket (>= 0), or kInjectBadArgument, kInjectNoCli or kInjectWrongPeer.
int attach_channel(const char *argument, bool follow = false);

// --follow: a program of the traced command's tree connects to the CLI
// named by UBTRACE_FOLLOW and sends it the variable's token. The connected
// socket, or -1 when the variable is not there, and a kInject* code when
// it is but names no CLI that answers (gone since, or out of reach: another
// network namespace); the variable is then taken out of the environment,
// so that what this program execs does not try again. `command`: this is
// the -c command itself, whose inherited channel is gone (its
// initialisers closed it): the scope "command" is then its own.
int follow_channel(bool command = false);

} // namespace ubtrace::agent
