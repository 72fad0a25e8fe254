// server/socket_util.cpp — see socket_util.h. Sockets are found by scanning /proc/self/fd.
#include "server/socket_util.h"

#include <arpa/inet.h>
#include <cerrno>
#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <cstdlib>
#include <functional>

namespace nt::server {

namespace {

bool addr_of(const sockaddr_storage& ss, socklen_t len, std::string& host, int& port) {
  char h[NI_MAXHOST], s[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&ss), len, h, sizeof(h), s, sizeof(s),
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return false;
  host = h;
  port = std::atoi(s);
  return true;
}

int local_port_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return -1;
  std::string h;
  int port = -1;
  return addr_of(ss, len, h, port) ? port : -1;
}

// Calls f(fd) for every socket descriptor of this process until f returns true; returns that fd.
int scan_sockets(const std::function<bool(int)>& f) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int found = -1;
  const int self = dirfd(d);
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == self) continue;
    struct stat st{};
    if (fstat(int(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (f(int(fd))) {
      found = int(fd);
      break;
    }
  }
  closedir(d);
  return found;
}

}  // namespace

int find_connection_socket(int local_port, const std::string& remote_addr, int remote_port) {
  return scan_sockets([&](int fd) {
    if (local_port_of(fd) != local_port) return false;
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
    std::string h;
    int p = -1;
    return addr_of(ss, len, h, p) && p == remote_port && h == remote_addr;
  });
}

bool peer_closed(int fd) {
  char c;
  const ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return false;
  if (n == 0) return true;
  return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

bool raise_listen_backlog(int port, int backlog) {
  const int fd = scan_sockets([&](int fd) {
    int listening = 0;
    socklen_t len = sizeof(listening);
    return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening &&
           local_port_of(fd) == port;
  });
  return fd >= 0 && listen(fd, backlog) == 0;
}

void shutdown_connections(int port) {
  scan_sockets([&](int fd) {
    int listening = 0;
    socklen_t len = sizeof(listening);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && !listening && local_port_of(fd) == port)
      shutdown(fd, SHUT_RDWR);
    return false;  // visit them all
  });
}

}  // namespace nt::server
