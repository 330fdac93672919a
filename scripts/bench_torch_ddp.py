#!/usr/bin/env python3
"""PyTorch DistributedDataParallel training throughput, the baseline of scripts/bench_ddp_gpu.sh.

One process per GPU (torch.multiprocessing), NCCL, the same step as scripts/bench_torch_training.py
(forward, cross-entropy, backward with DDP's bucketed all-reduce, SGD momentum 0.9 and weight
decay 1e-4) on a fixed random batch per GPU; fp32 with TF32 allowed, cudnn.benchmark on; eager,
NCHW or channels-last. Images/s of the global batch = GPUs x batch x iterations / wall time of
--iterations steps after --warmup. Prints one JSON object per variant (rank 0).

  NCCL_NVLS_ENABLE=0 python3 scripts/bench_torch_ddp.py --model resnet50 --gpus 8 --batch 256
"""
import argparse
import json
import os
import socket
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, args, variant, port, queue):
    import torch
    import torch.distributed as dist
    import torchvision
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast off, as the device documentation requires
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=args.gpus)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(0)
    fmt = torch.channels_last if variant == "eager_channels_last" else torch.contiguous_format
    model = getattr(torchvision.models, args.model)(num_classes=1000).cuda().train().to(memory_format=fmt)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    x = torch.randn(args.batch, 3, 224, 224, device="cuda").to(memory_format=fmt)
    y = torch.randint(0, 1000, (args.batch,), device="cuda")
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(ddp(x), y).backward()
        opt.step()

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(args.iterations):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    seconds = time.perf_counter() - start
    if rank == 0:
        queue.put({"framework": "pytorch_ddp", "model": args.model, "variant": variant, "gpus": args.gpus,
                   "batch_per_gpu": args.batch, "step_ms": seconds * 1000 / args.iterations,
                   "images_per_s": args.gpus * args.batch * args.iterations / seconds})
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--batch", type=int, default=256, help="per GPU")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--variants", default="eager_nchw,eager_channels_last")
    args = ap.parse_args()
    import torch.multiprocessing as mp
    for variant in args.variants.split(","):
        queue = mp.get_context("spawn").SimpleQueue()
        mp.spawn(worker, args=(args, variant, free_port(), queue), nprocs=args.gpus, join=True)
        print(json.dumps(queue.get()), flush=True)


if __name__ == "__main__":
    main()
