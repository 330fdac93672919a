// rendezvous_broadcast and free_local_port (see rendezvous.h), over POSIX sockets.
//
// Wire format, integers big-endian: a rank sends "ucDR", its rank (u32) and the world size (u32);
// rank 0 answers with the payload's length (u32) and the payload.
#include "training/distributed/rendezvous.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace ucudnn::distributed {

namespace {

using Clock = std::chrono::steady_clock;
constexpr char kMagic[4] = {'u', 'c', 'D', 'R'};
constexpr size_t kHelloBytes = 12;
constexpr size_t kMaxPayload = 64 * 1024;

// Closes the descriptor it holds.
class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket& operator=(Socket&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

std::string endpoint(const RendezvousOptions& o) { return o.address + ":" + std::to_string(o.port); }

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

void put_u32(unsigned char* p, uint32_t v) {
  const uint32_t be = htonl(v);
  std::memcpy(p, &be, 4);
}
uint32_t get_u32(const unsigned char* p) {
  uint32_t be;
  std::memcpy(&be, p, 4);
  return ntohl(be);
}

// Waits for `fd` to be readable (POLLIN) or writable; false on timeout.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int r = ::poll(&p, 1, ms_left(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

// Reads or writes exactly `bytes`; `what` names the transfer in errors.
Status read_all(int fd, void* data, size_t bytes, Clock::time_point deadline, const std::string& what) {
  auto* p = static_cast<unsigned char*>(data);
  while (bytes > 0) {
    if (!wait_for(fd, POLLIN, deadline)) return io_error(what + ": timed out");
    const ssize_t n = ::recv(fd, p, bytes, 0);
    if (n == 0) return io_error(what + ": the connection was closed");
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return io_error(what + ": " + std::strerror(errno));
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return Status::ok();
}

Status write_all(int fd, const void* data, size_t bytes, Clock::time_point deadline, const std::string& what) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    if (!wait_for(fd, POLLOUT, deadline)) return io_error(what + ": timed out");
    const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return io_error(what + ": " + std::strerror(errno));
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return Status::ok();
}

Expected<Socket> listen_on(int port, const std::string& where) {
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd() < 0) return io_error(where + ": cannot create a socket: " + std::strerror(errno));
  const int on = 1;
  ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return io_error(where + ": rank 0 cannot listen on port " + std::to_string(port) + ": " + std::strerror(errno) +
                    " (another run, or torchrun's own store, holds it? set MASTER_PORT or UCUDNN_RENDEZVOUS_PORT)");
  if (::listen(s.fd(), 128) != 0) return io_error(where + ": listen failed: " + std::strerror(errno));
  return s;
}

Expected<std::string> serve(const RendezvousOptions& o, const std::string& payload, Clock::time_point deadline) {
  const std::string where = "rendezvous on port " + std::to_string(o.port);
  UCUDNN_ASSIGN_OR_RETURN(Socket listener, listen_on(o.port, where));
  std::vector<Socket> peers(static_cast<size_t>(o.size));
  int joined = 1;
  while (joined < o.size) {
    if (!wait_for(listener.fd(), POLLIN, deadline))
      return io_error(where + ": timed out after " + std::to_string(static_cast<int>(o.timeout_seconds)) + " s with " +
                      std::to_string(joined - 1) + " of the " + std::to_string(o.size - 1) +
                      " other ranks connected (are they all started, with MASTER_ADDR naming this host?)");
    Socket peer(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    if (peer.fd() < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return io_error(where + ": accept failed: " + std::strerror(errno));
    }
    unsigned char hello[kHelloBytes];
    // A short wait per connection: a stray client that says nothing does not hold up the others.
    const auto hello_deadline = std::min(deadline, Clock::now() + std::chrono::seconds(10));
    if (!read_all(peer.fd(), hello, kHelloBytes, hello_deadline, where).is_ok() ||
        std::memcmp(hello, kMagic, sizeof kMagic) != 0)
      continue;  // not one of ours
    const uint32_t rank = get_u32(hello + 4), size = get_u32(hello + 8);
    if (size != static_cast<uint32_t>(o.size))
      return invalid_argument(where + ": rank " + std::to_string(rank) + " was started with WORLD_SIZE " +
                              std::to_string(size) + ", rank 0 with " + std::to_string(o.size));
    if (rank == 0 || rank >= size || peers[rank].fd() >= 0)
      return invalid_argument(where + ": rank " + std::to_string(rank) + " connected " +
                              (rank == 0 || rank >= size ? "with a rank outside 1.." + std::to_string(o.size - 1)
                                                         : std::string("twice (two processes with one RANK?)")));
    peers[rank] = std::move(peer);
    ++joined;
  }
  unsigned char length[4];
  put_u32(length, static_cast<uint32_t>(payload.size()));
  for (int r = 1; r < o.size; ++r) {
    const std::string what = where + ": sending to rank " + std::to_string(r);
    UCUDNN_RETURN_IF_ERROR(write_all(peers[r].fd(), length, 4, deadline, what));
    UCUDNN_RETURN_IF_ERROR(write_all(peers[r].fd(), payload.data(), payload.size(), deadline, what));
  }
  return payload;
}

// A connected socket to address:port, retrying every 100 ms until the deadline.
Expected<Socket> connect_to(const RendezvousOptions& o, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int r = ::getaddrinfo(o.address.c_str(), std::to_string(o.port).c_str(), &hints, &found);
  if (r != 0) return io_error("rendezvous with rank 0 at " + endpoint(o) + ": " + ::gai_strerror(r));
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(found, ::freeaddrinfo);
  std::string last = "no address";
  do {
    for (addrinfo* a = list.get(); a != nullptr; a = a->ai_next) {
      Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
      if (s.fd() < 0) continue;
      if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) == 0) return s;
      last = std::strerror(errno);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (Clock::now() < deadline);
  return io_error("rendezvous: could not reach rank 0 at " + endpoint(o) + " within " +
                  std::to_string(static_cast<int>(o.timeout_seconds)) + " s (" + last +
                  "; is rank 0 started, and MASTER_ADDR/MASTER_PORT the same for every rank?)");
}

Expected<std::string> fetch(const RendezvousOptions& o, Clock::time_point deadline) {
  UCUDNN_ASSIGN_OR_RETURN(Socket s, connect_to(o, deadline));
  const std::string what = "rendezvous with rank 0 at " + endpoint(o);
  unsigned char hello[kHelloBytes];
  std::memcpy(hello, kMagic, sizeof kMagic);
  put_u32(hello + 4, static_cast<uint32_t>(o.rank));
  put_u32(hello + 8, static_cast<uint32_t>(o.size));
  UCUDNN_RETURN_IF_ERROR(write_all(s.fd(), hello, kHelloBytes, deadline, what));
  unsigned char length[4];
  Status got = read_all(s.fd(), length, 4, deadline, what);
  if (!got.is_ok())
    return io_error(got.message() + " (rank 0 refused this rank: see its error; or waited in vain for another rank)");
  const uint32_t bytes = get_u32(length);
  if (bytes > kMaxPayload) return io_error(what + ": rank 0 announced " + std::to_string(bytes) + " bytes");
  std::string payload(bytes, '\0');
  UCUDNN_RETURN_IF_ERROR(read_all(s.fd(), payload.data(), bytes, deadline, what));
  return payload;
}

}  // namespace

Expected<std::string> rendezvous_broadcast(const RendezvousOptions& o, const std::string& payload) {
  if (o.size < 1 || o.rank < 0 || o.rank >= o.size)
    return invalid_argument("rendezvous: rank " + std::to_string(o.rank) + " of " + std::to_string(o.size));
  if (payload.size() > kMaxPayload) return invalid_argument("rendezvous: the payload is over 64 KiB");
  if (o.size == 1) return payload;  // nobody to meet
  if (o.port < 1 || o.port > 65535) return invalid_argument("rendezvous: port " + std::to_string(o.port));
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<long long>(std::max(0.0, o.timeout_seconds) * 1000));
  return o.rank == 0 ? serve(o, payload, deadline) : fetch(o, deadline);
}

Expected<int> free_local_port() {
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd() < 0) return io_error(std::string("cannot create a socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t length = sizeof addr;
  if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &length) != 0)
    return io_error(std::string("cannot find a free TCP port on 127.0.0.1: ") + std::strerror(errno));
  return static_cast<int>(ntohs(addr.sin_port));
}

}  // namespace ucudnn::distributed
