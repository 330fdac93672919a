// Data-parallel training's pure parts (training/distributed, training/data): gradient buckets
// against the allocation they cut, each rank's share of an epoch (disjoint, together the epoch, the
// halves of one process's global batches), the three launch styles read from the environment and
// their bad values, the GPU a rank sees first, the TCP rendezvous between threads on 127.0.0.1, and
// `--gpus N`'s processes (their environment; the first failure stops the rest).
// Ranks in separate processes (mpirun) are tests/ddp/ddp_cpu_test.py's.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "training/data/loader.h"
#include "training/data/random.h"
#include "training/data/synthetic.h"
#include "training/distributed/buckets.h"
#include "training/distributed/communicator.h"
#include "training/distributed/launch.h"
#include "training/distributed/local_ranks.h"
#include "training/distributed/rendezvous.h"

namespace ucudnn::distributed {
namespace {

// ---- buckets -----------------------------------------------------------------------------------
// The buckets tile [0, total) from the end, each a whole number of parameters within the cap.
void expect_tiling(const std::vector<GradientBucket>& buckets, const std::vector<size_t>& offsets, size_t total,
                   size_t cap) {
  ASSERT_FALSE(buckets.empty());
  size_t end = total, next_parameter = offsets.size();
  for (const GradientBucket& b : buckets) {
    EXPECT_EQ(b.end, end);
    EXPECT_EQ(b.end_parameter, next_parameter);
    ASSERT_LT(b.first_parameter, b.end_parameter);
    EXPECT_EQ(b.begin, offsets[b.first_parameter]);
    EXPECT_TRUE(b.end - b.begin <= cap || b.end_parameter - b.first_parameter == 1)
        << "bucket [" << b.begin << ", " << b.end << ") of several parameters exceeds the cap " << cap;
    end = b.begin;
    next_parameter = b.first_parameter;
  }
  EXPECT_EQ(end, 0u);
  EXPECT_EQ(next_parameter, 0u);
}

TEST(GradientBuckets, ReverseOrderWithinTheCap) {
  // Parameters of 100, 60, 40, 300, 20 bytes (padded to 4): cap 128.
  const std::vector<size_t> offsets = {0, 100, 160, 200, 500};
  const size_t total = 520;
  auto buckets = plan_gradient_buckets(offsets, total, 128);
  ASSERT_TRUE(buckets.has_value()) << buckets.status().to_string();
  expect_tiling(*buckets, offsets, total, 128);
  // From the end: {4} (20 B, and with 3 it would be 320 B), {3} alone (300 B > cap), {1, 2} (100 B),
  // {0} (with 1 and 2 it would be 200 B).
  ASSERT_EQ(buckets->size(), 4u);
  EXPECT_EQ((*buckets)[0].first_parameter, 4u);
  EXPECT_EQ((*buckets)[1].first_parameter, 3u);
  EXPECT_EQ((*buckets)[2].first_parameter, 1u);
  EXPECT_EQ((*buckets)[2].end_parameter, 3u);
  EXPECT_EQ((*buckets)[3].first_parameter, 0u);
}

TEST(GradientBuckets, OneBucketWhenEverythingFits) {
  auto buckets = plan_gradient_buckets({0, 256, 512}, 1024);
  ASSERT_TRUE(buckets.has_value());
  ASSERT_EQ(buckets->size(), 1u);
  EXPECT_EQ((*buckets)[0].begin, 0u);
  EXPECT_EQ((*buckets)[0].end, 1024u);
  EXPECT_EQ((*buckets)[0].first_parameter, 0u);
  EXPECT_EQ((*buckets)[0].end_parameter, 3u);
}

TEST(GradientBuckets, ResNetSizedLayoutTilesExactly) {
  // 161 parameters of varied sizes, aligned to 256 bytes like the trainer's; 25 MiB buckets.
  std::vector<size_t> offsets;
  size_t total = 0;
  for (size_t k = 0; k < 161; ++k) {
    offsets.push_back(total);
    const size_t bytes = (k % 3 == 0 ? 9437184 : k % 3 == 1 ? 1024 : 262144) + 4 * k;
    total = (total + bytes + 255) / 256 * 256;
  }
  auto buckets = plan_gradient_buckets(offsets, total, kDefaultBucketBytes);
  ASSERT_TRUE(buckets.has_value());
  expect_tiling(*buckets, offsets, total, kDefaultBucketBytes);
  EXPECT_GT(buckets->size(), 20u);
}

TEST(GradientBuckets, RefusesBadLayouts) {
  EXPECT_TRUE(plan_gradient_buckets({}, 0, 16)->empty());
  EXPECT_FALSE(plan_gradient_buckets({4, 8}, 16, 16).has_value());    // does not start at 0
  EXPECT_FALSE(plan_gradient_buckets({0, 12, 8}, 16, 16).has_value());  // decreasing
  EXPECT_FALSE(plan_gradient_buckets({0, 20}, 16, 16).has_value());   // past the end
  EXPECT_FALSE(plan_gradient_buckets({0, 6}, 16, 16).has_value());    // not float-aligned
  EXPECT_FALSE(plan_gradient_buckets({0}, 16, 0).has_value());        // no cap
  auto odd = plan_gradient_buckets({0}, 10, 16);
  ASSERT_FALSE(odd.has_value());
  EXPECT_NE(odd.status().message().find("not whole floats"), std::string::npos);
}

// ---- each rank's share of an epoch ----------------------------------------------------------------
TEST(ShardOrder, DisjointSharesThatMakeTheWholeGlobalBatches) {
  const std::vector<int64_t> order = data::epoch_order(103, true, 9, 2);
  const int64_t batch = 4;
  for (int world : {1, 2, 3, 5}) {
    std::vector<int64_t> together;
    for (int rank = 0; rank < world; ++rank) {
      const std::vector<int64_t> shard = data::shard_order(order, batch, rank, world);
      EXPECT_EQ(shard, data::shard_order(order, batch, rank, world));  // deterministic
      if (world == 1) {
        EXPECT_EQ(shard, order);
        continue;
      }
      const size_t globals = order.size() / static_cast<size_t>(batch * world);
      ASSERT_EQ(shard.size(), globals * batch) << "world " << world;
      // Rank r's batch b is the r-th slice of global batch b.
      for (size_t b = 0; b < globals; ++b)
        for (int64_t i = 0; i < batch; ++i)
          EXPECT_EQ(shard[b * batch + i], order[(b * world + rank) * batch + i]);
      together.insert(together.end(), shard.begin(), shard.end());
    }
    if (world == 1) continue;
    std::set<int64_t> unique(together.begin(), together.end());
    EXPECT_EQ(unique.size(), together.size()) << "shards overlap, world " << world;
    // Together: exactly the whole global batches at the front of the order.
    std::vector<int64_t> expected(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(together.size()));
    std::sort(expected.begin(), expected.end());
    std::sort(together.begin(), together.end());
    EXPECT_EQ(together, expected);
  }
}

// Every batch's labels and first pixels of one epoch.
std::vector<std::vector<float>> epoch_batches(data::DataLoader& loader, int64_t epoch) {
  loader.start_epoch(epoch);
  std::vector<std::vector<float>> batches;
  for (;;) {
    auto batch = loader.next();
    EXPECT_TRUE(batch.has_value()) << batch.status().to_string();
    if (!batch.has_value() || *batch == nullptr) break;
    const float* images = (*batch)->images.data<float>();
    batches.emplace_back(images, images + (*batch)->images.numel());
  }
  return batches;
}

TEST(ShardedLoader, RanksTogetherLoadOneProcesssGlobalBatches) {
  auto set = data::SyntheticDataset::create(50, {1, 2, 2}, 3, 5);
  ASSERT_TRUE(set.has_value());
  std::shared_ptr<const data::Dataset> shared = std::move(*set);
  auto one = data::DataLoader::create(shared, {.batch_size = 6, .drop_last = true, .seed = 4, .num_threads = 2});
  auto rank0 = data::DataLoader::create(
      shared, {.batch_size = 3, .drop_last = true, .seed = 4, .num_threads = 0, .rank = 0, .world_size = 2});
  auto rank1 = data::DataLoader::create(
      shared, {.batch_size = 3, .drop_last = true, .seed = 4, .num_threads = 3, .rank = 1, .world_size = 2});
  ASSERT_TRUE(one.has_value() && rank0.has_value() && rank1.has_value());
  EXPECT_EQ((*rank0)->batches_per_epoch(), 8);  // 50 / 6 global batches
  for (int64_t epoch : {0, 1}) {
    const auto global = epoch_batches(**one, epoch), first = epoch_batches(**rank0, epoch),
               second = epoch_batches(**rank1, epoch);
    ASSERT_EQ(global.size(), 8u);
    ASSERT_EQ(first.size(), 8u);
    ASSERT_EQ(second.size(), 8u);
    for (size_t b = 0; b < global.size(); ++b) {
      std::vector<float> halves = first[b];
      halves.insert(halves.end(), second[b].begin(), second[b].end());
      EXPECT_EQ(halves, global[b]) << "epoch " << epoch << " batch " << b;
    }
  }
}

TEST(ShardedLoader, RefusesRanksWithoutDropLastOrData) {
  auto set = data::SyntheticDataset::create(10, {1, 2, 2}, 3, 5);
  ASSERT_TRUE(set.has_value());
  std::shared_ptr<const data::Dataset> shared = std::move(*set);
  auto no_drop = data::DataLoader::create(shared, {.batch_size = 2, .rank = 0, .world_size = 2});
  ASSERT_FALSE(no_drop.has_value());
  EXPECT_NE(no_drop.status().message().find("drop_last"), std::string::npos);
  EXPECT_FALSE(data::DataLoader::create(shared, {.batch_size = 4, .drop_last = true, .world_size = 3}).has_value());
  EXPECT_FALSE(data::DataLoader::create(shared, {.batch_size = 1, .drop_last = true, .rank = 2, .world_size = 2})
                   .has_value());
}

// ---- launch styles -----------------------------------------------------------------------------
EnvLookup env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

std::string error_of(const std::map<std::string, std::string>& vars) {
  auto world = discover_world(env_of(vars));
  EXPECT_FALSE(world.has_value());
  return world.has_value() ? "" : world.status().message();
}

TEST(DiscoverWorld, OneProcessWithoutALauncher) {
  auto world = discover_world(env_of({{"PATH", "/bin"}}));
  ASSERT_TRUE(world.has_value());
  EXPECT_FALSE(world->distributed());
  EXPECT_EQ(world->size, 1);
  EXPECT_EQ(world->rank, 0);
}

TEST(DiscoverWorld, Mpirun) {
  auto world = discover_world(env_of({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "8"},
                                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                      {"RANK", "0"}, {"WORLD_SIZE", "1"}}));  // mpirun's win
  ASSERT_TRUE(world.has_value()) << world.status().to_string();
  EXPECT_EQ(world->launcher, Launcher::kMpirun);
  EXPECT_EQ(world->rank, 5);
  EXPECT_EQ(world->size, 8);
  EXPECT_EQ(world->local_rank, 1);
  EXPECT_EQ(world->local_size, 4);
  EXPECT_EQ(world->describe(), "rank 5 of 8 (local rank 1, mpirun)");
  EXPECT_NE(error_of({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}})
                .find("OMPI_COMM_WORLD_RANK=2 is not below OMPI_COMM_WORLD_SIZE=2"),
            std::string::npos);
  EXPECT_NE(error_of({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}})
                .find("OMPI_COMM_WORLD_LOCAL_RANK is not set"),
            std::string::npos);
}

TEST(DiscoverWorld, TorchrunStyle) {
  const std::map<std::string, std::string> good = {{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"},
                                                   {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "node7"},
                                                   {"MASTER_PORT", "29500"}};
  auto world = discover_world(env_of(good));
  ASSERT_TRUE(world.has_value()) << world.status().to_string();
  EXPECT_EQ(world->launcher, Launcher::kTorchrun);
  EXPECT_EQ(world->rank, 3);
  EXPECT_EQ(world->size, 4);
  EXPECT_EQ(world->local_rank, 1);
  EXPECT_EQ(world->master_addr, "node7");
  EXPECT_EQ(world->rendezvous_port, 29500);
  // Under torchrun itself its agent's store holds MASTER_PORT; UCUDNN_RENDEZVOUS_PORT overrides.
  auto under_torchrun = good;
  under_torchrun["TORCHELASTIC_RUN_ID"] = "none";
  EXPECT_EQ(discover_world(env_of(under_torchrun))->rendezvous_port, 29501);
  under_torchrun["UCUDNN_RENDEZVOUS_PORT"] = "4000";
  EXPECT_EQ(discover_world(env_of(under_torchrun))->rendezvous_port, 4000);
  // One rank needs no address.
  auto alone = discover_world(env_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_RANK", "0"}}));
  ASSERT_TRUE(alone.has_value()) << alone.status().to_string();
  EXPECT_TRUE(alone->distributed());
  EXPECT_EQ(alone->size, 1);
}

TEST(DiscoverWorld, TorchrunStyleErrorsNameTheVariable) {
  std::map<std::string, std::string> env = {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"},
                                            {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}};
  auto with = [&](const std::string& name, const char* value) {
    auto e = env;
    if (value == nullptr) e.erase(name);
    else e[name] = value;
    return error_of(e);
  };
  EXPECT_NE(with("RANK", "two").find("RANK='two' is not an integer"), std::string::npos);
  EXPECT_NE(with("RANK", "2").find("RANK=2 is not below WORLD_SIZE=2"), std::string::npos);
  EXPECT_NE(with("RANK", "-1").find("RANK='-1'"), std::string::npos);
  EXPECT_NE(with("WORLD_SIZE", "0").find("WORLD_SIZE='0'"), std::string::npos);
  EXPECT_NE(with("WORLD_SIZE", nullptr).find("WORLD_SIZE is not set"), std::string::npos);
  EXPECT_NE(with("LOCAL_RANK", nullptr).find("LOCAL_RANK is not set"), std::string::npos);
  EXPECT_NE(with("MASTER_ADDR", nullptr).find("MASTER_ADDR is not set"), std::string::npos);
  EXPECT_NE(with("MASTER_PORT", "70000").find("MASTER_PORT='70000' is not an integer in [1, 65535]"),
            std::string::npos);
  EXPECT_NE(with("MASTER_PORT", "12x").find("MASTER_PORT='12x'"), std::string::npos);
  EXPECT_NE(with("MASTER_PORT", nullptr).find("MASTER_PORT is not set"), std::string::npos);
}

TEST(SelectGpu, TheRanksGpuComesFirstAndTheOthersStayVisible) {
  EXPECT_EQ(*visible_devices_for(2, "4,5,6,7"), "6,4,5,7");
  EXPECT_EQ(*visible_devices_for(0, "GPU-aa,GPU-bb"), "GPU-aa,GPU-bb");
  const std::string unset = *visible_devices_for(1, nullptr);
  EXPECT_EQ(unset.substr(0, 8), "1,0,2,3,");
  EXPECT_EQ(std::count(unset.begin(), unset.end(), ','), 63);
  auto too_few = visible_devices_for(2, "0,1");
  ASSERT_FALSE(too_few.has_value());
  EXPECT_NE(too_few.status().message().find("local rank 2 has no GPU"), std::string::npos);
}

// ---- rendezvous ----------------------------------------------------------------------------------
TEST(Rendezvous, EveryRankReceivesRankZerosBytes) {
  auto port = free_local_port();
  ASSERT_TRUE(port.has_value()) << port.status().to_string();
  const int size = 3;
  std::string id(128, '\0');
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>(i * 7 + 1);
  std::vector<Expected<std::string>> got(size, Expected<std::string>(internal_error("not run")));
  std::vector<std::thread> ranks;
  for (int rank = size - 1; rank >= 0; --rank)  // the others first: they wait for rank 0 to listen
    ranks.emplace_back([&, rank] {
      got[rank] = rendezvous_broadcast({"127.0.0.1", *port, rank, size, 30}, rank == 0 ? id : "ignored");
    });
  for (std::thread& t : ranks) t.join();
  for (int rank = 0; rank < size; ++rank) {
    ASSERT_TRUE(got[rank].has_value()) << "rank " << rank << ": " << got[rank].status().to_string();
    EXPECT_EQ(*got[rank], id) << "rank " << rank;
  }
}

TEST(Rendezvous, AWrongWorldSizeIsRefusedByRankZero) {
  auto port = free_local_port();
  ASSERT_TRUE(port.has_value());
  Expected<std::string> zero(internal_error("not run")), one(internal_error("not run"));
  std::thread server([&] { zero = rendezvous_broadcast({"127.0.0.1", *port, 0, 2, 30}, "id"); });
  std::thread client([&] { one = rendezvous_broadcast({"127.0.0.1", *port, 1, 3, 30}, ""); });
  server.join();
  client.join();
  ASSERT_FALSE(zero.has_value());
  EXPECT_NE(zero.status().message().find("started with WORLD_SIZE 3, rank 0 with 2"), std::string::npos)
      << zero.status().message();
  EXPECT_FALSE(one.has_value());
}

TEST(Rendezvous, TimeoutsNameTheAddress) {
  auto port = free_local_port();
  ASSERT_TRUE(port.has_value());
  auto lonely = rendezvous_broadcast({"127.0.0.1", *port, 1, 2, 0.3}, "");
  ASSERT_FALSE(lonely.has_value());
  EXPECT_NE(lonely.status().message().find("127.0.0.1:" + std::to_string(*port)), std::string::npos)
      << lonely.status().message();
  auto waiting = rendezvous_broadcast({"127.0.0.1", *port, 0, 2, 0.3}, "id");
  ASSERT_FALSE(waiting.has_value());
  EXPECT_NE(waiting.status().message().find("0 of the 1 other ranks connected"), std::string::npos)
      << waiting.status().message();
  EXPECT_FALSE(rendezvous_broadcast({"127.0.0.1", 0, 0, 2, 1}, "id").has_value());  // port 0
  EXPECT_EQ(*rendezvous_broadcast({"", 0, 0, 1, 1}, "alone"), "alone");              // nobody to meet
}

// ---- `--gpus N`'s processes ----------------------------------------------------------------------
TEST(LocalRanks, EachRankGetsItsEnvironment) {
  const std::string check =
      "test \"$WORLD_SIZE\" = 3 && test \"$LOCAL_WORLD_SIZE\" = 3 && test \"$RANK\" = \"$LOCAL_RANK\" && "
      "test \"$MASTER_ADDR\" = 127.0.0.1 && test \"$MASTER_PORT\" -gt 0 && test \"$RANK\" -lt 3";
  auto status = run_local_ranks({"/bin/sh", "-c", check}, 3);
  ASSERT_TRUE(status.has_value()) << status.status().to_string();
  EXPECT_EQ(*status, 0);
}

TEST(LocalRanks, TheFirstFailureStopsTheOthers) {
  const auto start = std::chrono::steady_clock::now();
  // Rank 1 fails; ranks 0 and 2 would sleep a minute unless stopped.
  auto status = run_local_ranks({"/bin/sh", "-c", "if [ \"$RANK\" = 1 ]; then exit 3; fi; exec sleep 60"}, 3);
  ASSERT_TRUE(status.has_value()) << status.status().to_string();
  EXPECT_EQ(*status, 3);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  auto missing = run_local_ranks({"/nonexistent/ucudnn"}, 2);
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(*missing, 127);
}

TEST(SingleRankCommunicator, LeavesDataAsItIs) {
  SingleRankCommunicator single;
  float data[3] = {1, 2, 3};
  ASSERT_TRUE(single.all_reduce(data, 3, ReduceOp::kAverage).is_ok());
  EXPECT_EQ(data[2], 3.0f);
  double values[2] = {4, 5};
  ASSERT_TRUE(single.all_reduce_host(values, 2, ReduceOp::kMax).is_ok());
  EXPECT_EQ(values[1], 5.0);
  EXPECT_TRUE(single.barrier().is_ok());
  EXPECT_FALSE(single.broadcast(data, sizeof data, 1).is_ok());  // no rank 1
  EXPECT_FALSE(single.all_reduce_host(values, Communicator::kMaxHostValues + 1, ReduceOp::kSum).is_ok());
}

}  // namespace
}  // namespace ucudnn::distributed
