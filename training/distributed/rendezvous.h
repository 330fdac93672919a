// A minimal TCP rendezvous: how the ranks of a torchrun-style launch receive rank 0's bytes (NCCL's
// 128-byte unique id) before any communicator exists.
//
// Rank 0 listens on `port` on every interface and waits until each other rank has connected and
// announced itself (a magic word, its rank and the world size it was given); it then sends every
// one of them the payload and closes. The other ranks connect to address:port — retrying while
// rank 0 is not listening yet — and read it. A wrong world size or a rank that connects twice is
// an error on rank 0; everything fails after `timeout_seconds` with a message naming the address
// and what was still missing.
#pragma once

#include <string>

#include "runtime/core/status.h"

namespace ucudnn::distributed {

struct RendezvousOptions {
  std::string address;  // rank 0's host (MASTER_ADDR); rank 0 itself listens on every interface
  int port = 0;
  int rank = 0, size = 1;
  double timeout_seconds = 300;
};

// Rank 0: sends `payload` (at most 64 KiB) to every other rank and returns it. Others: return
// what rank 0 sent (their `payload` is ignored).
Expected<std::string> rendezvous_broadcast(const RendezvousOptions& options, const std::string& payload);

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's choice), for one-host launches.
Expected<int> free_local_port();

}  // namespace ucudnn::distributed
