// The flags `run`, `plan` and `report` share — model shapes, device, threads and
// the optimizer's settings — and their translation into SessionOptions.
#pragma once

#include <set>
#include <string>

#include "tools/ucudnn/cli_args.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::cli {

// --device --math --layout --batch --threads --plan --policy --workspace --batch-sizes --streams --db
// --cuda-graph --benchmark-devices
extern const std::set<std::string> kSessionValueFlags;
// --rebenchmark --quiet --share-workspace
extern const std::set<std::string> kSessionBoolFlags;
// Help text for those flags, for each command's usage.
extern const char* const kSessionFlagsHelp;

// Fills `options` from the flags and checks them (ucudnn::check_options):
// InvalidArgument, a usage error, for malformed or contradictory values.
// `--cuda-graph compare` (time with and without, `ucudnn run`) is accepted only where `compare`
// is given: it then says whether it was asked for, and the session gets cuda_graph on.
Status session_options_from_flags(const Args& args, SessionOptions* options, bool* compare = nullptr);

// `a` ∪ `b` (to build one command's flag set from shared parts).
std::set<std::string> flag_union(std::set<std::string> a, const std::set<std::string>& b);

}  // namespace ucudnn::cli
