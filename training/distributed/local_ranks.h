// `ucudnn train --gpus N` on one host: N processes, one per GPU, started as a torchrun-style
// launch would start them (launch.h), so that one host and several take the same code path.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/status.h"

namespace ucudnn::distributed {

// Runs the program `argv[0]` with arguments `argv` (argv[0] included, as exec takes it) `count`
// times, as ranks 0..count-1, each with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR=127.0.0.1 and MASTER_PORT (a free port) added to this process's environment, and
// waits for all of them. SIGINT (Ctrl-C reaches every process of the terminal's group) is ignored
// here meanwhile: the ranks handle it. Returns 0 when every rank exits with 0; else the first
// failure's exit status (128 + the signal for a rank killed by one), after stopping the other
// ranks (SIGTERM, SIGKILL 10 s later), with a line on stderr naming the rank. Status 130 (a rank
// interrupted by Ctrl-C, its checkpoint saved) stops no other rank.
Expected<int> run_local_ranks(const std::vector<std::string>& argv, int count);

}  // namespace ucudnn::distributed
