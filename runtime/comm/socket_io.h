//===- comm/socket_io.h - TCP sockets with deadlines, for the TCP backend -===//
//
// Non-blocking sockets driven by poll(): every read and write loops over
// partial transfers until done or the deadline passes, writes never raise
// SIGPIPE (MSG_NOSIGNAL), and every failure is a bmrt::Error that names this
// rank, the peer rank and what was going on ("rank 0: rank 2 closed its
// connection during all-gather of 3 x 5 floats: it died?").
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_COMM_SOCKET_IO_H
#define BMRT_COMM_SOCKET_IO_H

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace bmrt {

/// When an exchange must be done by, and how to say it was not.
struct IoDeadline {
  bool forever = true;
  std::chrono::steady_clock::time_point at{};
  double seconds = 0; // the timeout it came from, for messages
  static IoDeadline after(double seconds); // seconds <= 0: forever
  int pollMs() const;                      // for poll(): -1 forever, else >= 0
  bool passed() const;
};

/// One side of an exchange: this rank, the peer, the activity (for messages).
struct Link {
  int fd = -1;
  int selfRank = 0;
  int peerRank = 0;
  std::string during; // "all-reduce of 12 floats", "the handshake"
  int wakeFd = -1;    // readable: stop waiting (the owner is shutting down); -1: none
};

void sendAll(const Link &link, const void *data, size_t bytes, const IoDeadline &deadline);
void recvAll(const Link &link, void *data, size_t bytes, const IoDeadline &deadline);

/// Rank 0: listens on `port` on every interface (IPv6 with IPv4 mapped when
/// the host has IPv6, else IPv4).
int listenOn(int port, int selfRank);
/// Rank 0: the next connection, or -1 once the deadline passes.
int acceptBefore(int listenFd, const IoDeadline &deadline, int selfRank);
/// The other ranks: connects to host:port, retrying (rank 0 may not listen
/// yet) until the deadline; fails naming the last error.
int connectBefore(const std::string &host, int port, const IoDeadline &deadline, int selfRank);

void closeFd(int fd);
/// Failure path: shuts the sending side of each socket down, discards what
/// the peers still send until they close (at most `seconds`), then closes
/// them all (entries become -1).
void lingerAndClose(std::vector<int> &fds, double seconds);

} // namespace bmrt

#endif // BMRT_COMM_SOCKET_IO_H
