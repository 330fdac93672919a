// The flags `run`, `plan` and `report` share — model shapes, device, threads and
// the optimizer's settings — and their translation into SessionOptions.
#pragma once

#include <set>
#include <string>

#include "tools/ucudnn/cli_args.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::cli {

// --device --math --batch --threads --plan --policy --workspace --batch-sizes --db
extern const std::set<std::string> kSessionValueFlags;
// --rebenchmark --quiet --share-workspace
extern const std::set<std::string> kSessionBoolFlags;
// Help text for those flags, for each command's usage.
extern const char* const kSessionFlagsHelp;

// Fills `options` from the flags; InvalidArgument for malformed values.
Status session_options_from_flags(const Args& args, SessionOptions* options);

// `a` ∪ `b` (to build one command's flag set from shared parts).
std::set<std::string> flag_union(std::set<std::string> a, const std::set<std::string>& b);

}  // namespace ucudnn::cli
