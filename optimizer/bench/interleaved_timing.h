// fastest_in_turns: the CPU benchmarker's timing loop (Note [interleaved timing]).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "optimizer/bench/benchmarker.h"

namespace ucudnn::optimizer {

// Note [interleaved timing]: on a shared machine the neighbours' load comes in bursts. Timed one
// algorithm after another, a burst lands on one algorithm's runs and makes it look slower than the
// others: on the device host's 16-CPU VM, ResNet-50's 3×3 convolution of 128 channels at 28×28, batch 1,
// once had Winograd timed at 0.377 ms (0.135 ms in a quieter run of the same machine type) and lost to a
// 0.369 ms oneDNN convolution. So the algorithms run in turns, one run each per round, and each keeps
// its fastest timed run (the load only adds time). Past `options.repeats` timed rounds, more rounds run
// (up to `options.max_repeats`) while all the runs so far took under `options.round_budget_ms`: the cheap
// kernels, a batch-1 network's, whose times a burst moves most, get more samples for a few milliseconds.
//
// The fastest timed run of each of `runs` in ms, after `options.warmup` untimed rounds; an empty function
// is not run; nullopt for an empty one and for one that returned false (it is not run again).
std::vector<std::optional<double>> fastest_in_turns(const std::vector<std::function<bool()>>& runs,
                                                    const CpuBenchmarkOptions& options);

}  // namespace ucudnn::optimizer
