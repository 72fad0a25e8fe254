// server/socket_util.h — what the HTTP library does not expose: the socket of the connection a
// handler is serving (found by its addresses), whether its peer has gone, and a deeper listen
// backlog. Linux only.
#pragma once
#include <string>

namespace nt::server {

// The open socket whose local port is `local_port` and whose peer is remote_addr:remote_port, or -1.
int find_connection_socket(int local_port, const std::string& remote_addr, int remote_port);
// True when the peer closed the connection or it failed (a pending byte or no data is "alive").
bool peer_closed(int fd);
// Raises the listen backlog of the listening socket bound to `port` (the library uses 5, too few
// for a burst of clients). Returns false if that socket is not found.
bool raise_listen_backlog(int port, int backlog);
// Shuts down every accepted connection on local port `port` (at shutdown, once no request is in
// flight: idle keep-alive connections would otherwise hold the workers for their keep-alive time).
void shutdown_connections(int port);

}  // namespace nt::server
