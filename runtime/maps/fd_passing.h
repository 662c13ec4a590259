// Handing the region's descriptor to another process over a unix socket
// (SCM_RIGHTS), for a traced process that was not started by the CLI.
#pragma once

#include "runtime/result.h"

namespace ubtrace::runtime::maps {

Result<void> send_fd(int socket, int fd);
// The received descriptor, close-on-exec; the caller owns it.
Result<int> receive_fd(int socket);

} // namespace ubtrace::runtime::maps
