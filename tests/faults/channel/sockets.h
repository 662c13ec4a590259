// Sockets as a hostile local user sees them, for the channel fault tests.
#pragma once

#include <string>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

namespace ubtrace::faults {

sockaddr_un abstract_address(const std::string &name, socklen_t *len);
// Listens on "@<name>" (SEQPACKET, non-blocking), as a local user who got
// there first; -1 if the name is taken.
int squat(const std::string &name);
// What connected to a squatter so far: a socket, or -1 if nobody.
int squatter_caller(int squatter);
// Waits up to `ms` for a connected socket: bytes read (0 at EOF), -1 if
// nothing came.
ssize_t bytes_within(int fd, int ms);

} // namespace ubtrace::faults
