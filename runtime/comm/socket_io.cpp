//===- comm/socket_io.cpp - TCP sockets with deadlines --------------------===//
//
// See socket_io.h. Sockets are non-blocking from the start; a transfer
// tries first and polls only when the kernel says EAGAIN, so a large buffer
// costs one poll per socket-buffer-full, not one per call.
//
//===----------------------------------------------------------------------===//
#include "comm/socket_io.h"

#include "bmrt/context.h"

#include <arpa/inet.h>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace bmrt {

using Clock = std::chrono::steady_clock;

IoDeadline IoDeadline::after(double seconds) {
  IoDeadline d;
  d.seconds = seconds;
  if (seconds > 0) {
    d.forever = false;
    d.at = Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  return d;
}

int IoDeadline::pollMs() const {
  if (forever)
    return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at - Clock::now()).count();
  if (left <= 0)
    return 0;
  return left >= INT_MAX ? INT_MAX : (int)left + 1; // +1: never wake just before `at`
}

bool IoDeadline::passed() const { return !forever && Clock::now() >= at; }

static std::string secondsText(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

static std::string self(int rank) { return "rank " + std::to_string(rank) + ": "; }

[[noreturn]] static void failClosed(const Link &link) {
  fail(self(link.selfRank) + "rank " + std::to_string(link.peerRank) +
       " closed its connection during " + link.during + ": it died?");
}

[[noreturn]] static void failTimeout(const Link &link, const IoDeadline &deadline) {
  fail(self(link.selfRank) + link.during + " did not finish in " + secondsText(deadline.seconds) +
       " s: waiting for rank " + std::to_string(link.peerRank) +
       " (another rank died or hangs); stopping");
}

[[noreturn]] static void failErrno(const Link &link, const char *call, int err) {
  fail(self(link.selfRank) + call + " with rank " + std::to_string(link.peerRank) +
       " failed during " + link.during + ": " + std::strerror(err));
}

/// Waits until fd is ready for `events` (or in error: the next transfer
/// reports it); fails once the deadline passes or link.wakeFd is signalled.
static void waitReady(const Link &link, short events, const IoDeadline &deadline) {
  for (;;) {
    pollfd p[2] = {{link.fd, events, 0}, {link.wakeFd, POLLIN, 0}};
    int rc = ::poll(p, link.wakeFd >= 0 ? 2 : 1, deadline.pollMs());
    if (rc > 0) {
      if (p[1].revents)
        fail(self(link.selfRank) + link.during + " was interrupted: this rank is stopping");
      if (p[0].revents & POLLNVAL)
        fail(self(link.selfRank) + "the connection to rank " + std::to_string(link.peerRank) +
             " is closed (during " + link.during + ")");
      return;
    }
    if (rc == 0) {
      if (deadline.passed())
        failTimeout(link, deadline);
      continue;
    }
    if (errno != EINTR)
      failErrno(link, "poll", errno);
  }
}

void sendAll(const Link &link, const void *data, size_t bytes, const IoDeadline &deadline) {
  const char *p = (const char *)data;
  while (bytes > 0) {
    ssize_t k = ::send(link.fd, p, bytes, MSG_NOSIGNAL);
    if (k > 0) {
      p += k;
      bytes -= (size_t)k;
      continue;
    }
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      waitReady(link, POLLOUT, deadline);
      continue;
    }
    if (k < 0 && (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN))
      failClosed(link);
    failErrno(link, "send", k < 0 ? errno : EIO);
  }
}

void recvAll(const Link &link, void *data, size_t bytes, const IoDeadline &deadline) {
  char *p = (char *)data;
  while (bytes > 0) {
    ssize_t k = ::recv(link.fd, p, bytes, 0);
    if (k > 0) {
      p += k;
      bytes -= (size_t)k;
      continue;
    }
    if (k == 0)
      failClosed(link);
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      waitReady(link, POLLIN, deadline);
      continue;
    }
    if (errno == ECONNRESET || errno == ENOTCONN)
      failClosed(link);
    failErrno(link, "recv", errno);
  }
}

void lingerAndClose(std::vector<int> &fds, double seconds) {
  // close() with unread input sends a reset, and a reset can make the peer
  // drop what we sent last (rank 0's error message). So: send our FIN
  // after the queued data, read and discard until the peer closes too (it
  // fails on the message and exits), and only then close.
  for (int fd : fds)
    if (fd >= 0)
      ::shutdown(fd, SHUT_WR);
  IoDeadline deadline = IoDeadline::after(seconds);
  std::vector<char> sink(1 << 16);
  for (;;) {
    std::vector<pollfd> open;
    for (int fd : fds)
      if (fd >= 0)
        open.push_back({fd, POLLIN, 0});
    if (open.empty() || deadline.passed())
      break;
    int rc = ::poll(open.data(), open.size(), deadline.pollMs());
    if (rc < 0 && errno != EINTR)
      break;
    for (const pollfd &p : open) {
      if (!p.revents)
        continue;
      ssize_t k = ::recv(p.fd, sink.data(), sink.size(), 0);
      if (k > 0 || (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)))
        continue;
      for (int &fd : fds) // closed by the peer, or broken: done with it
        if (fd == p.fd) {
          ::close(fd);
          fd = -1;
        }
    }
  }
  for (int &fd : fds) {
    closeFd(fd);
    fd = -1;
  }
}

void closeFd(int fd) {
  if (fd >= 0)
    ::close(fd); // nothing to do about an error at close: the data went or the peer is gone
}

static void setNonBlocking(int fd, int selfRank) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    fail(self(selfRank) + "fcntl(O_NONBLOCK) on a socket failed: " + std::strerror(errno));
}

static void setNoDelay(int fd, int selfRank) {
  // Headers are small and answered at once: no Nagle delay.
  int one = 1;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
    fail(self(selfRank) + "setsockopt(TCP_NODELAY) failed: " + std::strerror(errno));
}

int listenOn(int port, int selfRank) {
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool v6 = fd >= 0;
  if (!v6) {
    if (errno != EAFNOSUPPORT)
      fail(self(selfRank) + "socket(AF_INET6) failed: " + std::strerror(errno));
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      fail(self(selfRank) + "socket(AF_INET) failed: " + std::strerror(errno));
  }
  int one = 1, zero = 0;
  // REUSEADDR: a previous run's connections in TIME_WAIT must not block the port.
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) {
    int err = errno;
    ::close(fd);
    fail(self(selfRank) + "setsockopt(SO_REUSEADDR) failed: " + std::strerror(err));
  }
  int rc;
  if (v6) {
    if (::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) < 0) {
      int err = errno;
      ::close(fd);
      fail(self(selfRank) + "setsockopt(IPV6_V6ONLY) failed: " + std::strerror(err));
    }
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons((uint16_t)port);
    rc = ::bind(fd, (sockaddr *)&a, sizeof a);
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons((uint16_t)port);
    rc = ::bind(fd, (sockaddr *)&a, sizeof a);
  }
  if (rc < 0) {
    int err = errno;
    ::close(fd);
    fail(self(selfRank) + "cannot listen on MASTER_PORT " + std::to_string(port) + ": bind: " +
         std::strerror(err) +
         (err == EADDRINUSE ? " (another job or process uses this port; pick another MASTER_PORT)"
                            : ""));
  }
  if (::listen(fd, 128) < 0) {
    int err = errno;
    ::close(fd);
    fail(self(selfRank) + "listen on port " + std::to_string(port) + " failed: " +
         std::strerror(err));
  }
  setNonBlocking(fd, selfRank);
  return fd;
}

int acceptBefore(int listenFd, const IoDeadline &deadline, int selfRank) {
  for (;;) {
    int fd = ::accept4(listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      setNoDelay(fd, selfRank);
      return fd;
    }
    if (errno == EINTR || errno == ECONNABORTED)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      fail(self(selfRank) + "accept failed: " + std::strerror(errno));
    pollfd p{listenFd, POLLIN, 0};
    int rc = ::poll(&p, 1, deadline.pollMs());
    if (rc < 0 && errno != EINTR)
      fail(self(selfRank) + "poll on the listening socket failed: " + std::strerror(errno));
    if (rc == 0 && deadline.passed())
      return -1;
  }
}

/// One non-blocking connect to one address; returns the fd or -1 with
/// `error` set.
static int connectOnce(const addrinfo *ai, const IoDeadline &deadline, std::string &error) {
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
    return fd;
  if (errno != EINPROGRESS) {
    error = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  // At most a second per attempt: an address that drops packets must not
  // use up the whole deadline before the next attempt.
  int ms = deadline.pollMs();
  if (ms < 0 || ms > 1000)
    ms = 1000;
  pollfd p{fd, POLLOUT, 0};
  int rc;
  do
    rc = ::poll(&p, 1, ms);
  while (rc < 0 && errno == EINTR);
  if (rc <= 0) {
    error = rc == 0 ? "connect timed out" : std::string("poll: ") + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  int soError = 0;
  socklen_t len = sizeof soError;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len) < 0)
    soError = errno;
  if (soError != 0) {
    error = std::strerror(soError);
    ::close(fd);
    return -1;
  }
  return fd;
}

int connectBefore(const std::string &host, int port, const IoDeadline &deadline, int selfRank) {
  std::string portText = std::to_string(port);
  std::string error = "no attempt";
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *list = nullptr;
    int rc = ::getaddrinfo(host.c_str(), portText.c_str(), &hints, &list);
    if (rc != 0) {
      error = std::string("cannot resolve MASTER_ADDR: ") + ::gai_strerror(rc);
    } else {
      for (addrinfo *ai = list; ai; ai = ai->ai_next) {
        int fd = connectOnce(ai, deadline, error);
        if (fd >= 0) {
          ::freeaddrinfo(list);
          setNoDelay(fd, selfRank);
          return fd;
        }
      }
      ::freeaddrinfo(list);
    }
    if (deadline.passed())
      fail(self(selfRank) + "could not connect to rank 0 at " + host + ":" + portText +
           " within " + secondsText(deadline.seconds) + " s (last error: " + error +
           "); is rank 0 running, and are MASTER_ADDR and MASTER_PORT the same on every rank?");
    // Rank 0 may not listen yet: try again shortly.
    int ms = deadline.pollMs();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms < 0 || ms > 100 ? 100 : ms));
  }
}

} // namespace bmrt
