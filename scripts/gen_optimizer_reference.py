#!/usr/bin/python3
"""Expected numbers for the optimizer tests, produced by PyTorch itself (torch.optim).

Writes, under tests/data/training/:
  optimizer_steps.txt  five successive torch.optim.SGD / torch.optim.AdamW steps per case
                       (tests/optimizer_update_test.cc replays them on SgdUpdate / AdamWUpdate);
  lr_schedules.txt     the learning rate PyTorch's schedulers give before each update
                       (tests/schedule_test.cc compares training::learning_rate with it).

Every hyper-parameter and lr goes through float32 first, as ucudnn stores them (float attributes,
an lr tensor of one float), so both sides start from the same numbers.

Format (text, one record a line, numbers as %.9g / %.17g):
  case NAME sgd|adamw KEY=VALUE ...      hyper-parameters as the op's attributes
  init P...                              the parameter before the first step
  step LR G...                           one update: its lr and gradient
  param P...                             the parameter after it
  state NAME S...                        an optimizer state after it (momentum_buffer, exp_avg, exp_avg_sq)
  schedule SPEC base_lr=B total_steps=T  a schedule (training/schedule.h's parse_schedule spec)
  lrs L...                               learning_rate(step) for step = 0, 1, ..., T

Run: /usr/bin/python3 scripts/gen_optimizer_reference.py  (from the repository root)
"""
import math
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "training")
STEPS = 5
SIZE = 7


def f32(x):
    return float(np.float32(x))


def floats(values, fmt="%.9g"):
    return " ".join(fmt % v for v in values)


OPTIMIZER_CASES = [
    ("sgd_plain", "sgd", dict(momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=0)),
    ("sgd_weight_decay", "sgd", dict(momentum=0.0, dampening=0.0, weight_decay=0.1, nesterov=0)),
    ("sgd_momentum", "sgd", dict(momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=0)),
    ("sgd_momentum_dampening_decay", "sgd", dict(momentum=0.9, dampening=0.5, weight_decay=0.01, nesterov=0)),
    ("sgd_nesterov", "sgd", dict(momentum=0.9, dampening=0.0, weight_decay=0.001, nesterov=1)),
    ("adamw_defaults", "adamw", dict(beta1=0.9, beta2=0.999, epsilon=1e-8, weight_decay=0.01)),
    ("adamw_custom", "adamw", dict(beta1=0.8, beta2=0.95, epsilon=1e-6, weight_decay=0.1)),
    ("adamw_no_decay", "adamw", dict(beta1=0.9, beta2=0.999, epsilon=1e-8, weight_decay=0.0)),
]

LRS = [0.1, 0.1, 0.05, 0.05, 0.02]  # changes between steps, as a schedule would


def make_optimizer(kind, hyper, param, lr):
    h = {k: f32(v) for k, v in hyper.items()}
    if kind == "sgd":
        return torch.optim.SGD([param], lr=lr, momentum=h["momentum"], dampening=h["dampening"],
                               weight_decay=h["weight_decay"], nesterov=bool(hyper["nesterov"]))
    return torch.optim.AdamW([param], lr=lr, betas=(h["beta1"], h["beta2"]), eps=h["epsilon"],
                             weight_decay=h["weight_decay"])


def optimizer_lines():
    lines = []
    generator = torch.Generator().manual_seed(12)
    for name, kind, hyper in OPTIMIZER_CASES:
        attrs = " ".join("%s=%s" % (k, repr(v)) for k, v in hyper.items())
        lines.append("case %s %s %s" % (name, kind, attrs))
        param = torch.nn.Parameter(torch.rand(SIZE, generator=generator) * 2 - 1)
        lines.append("init " + floats(param.detach().tolist()))
        optimizer = make_optimizer(kind, hyper, param, f32(LRS[0]))
        for step in range(STEPS):
            lr = f32(LRS[step])
            for group in optimizer.param_groups:
                group["lr"] = lr
            grad = torch.rand(SIZE, generator=generator) * 2 - 1
            param.grad = grad.clone()
            optimizer.step()
            lines.append("step %s %s" % ("%.9g" % lr, floats(grad.tolist())))
            lines.append("param " + floats(param.detach().tolist()))
            state = optimizer.state[param]
            for key in ("momentum_buffer", "exp_avg", "exp_avg_sq"):
                if state.get(key) is not None:
                    lines.append("state %s %s" % (key, floats(state[key].tolist())))
    return lines


def schedulers_for(optimizer, spec, total):
    """PyTorch's schedulers for one of our specs: the main one, after a LinearLR warm-up through SequentialLR."""
    kind, _, rest = spec.partition(",")
    options = dict(item.split("=") for item in rest.split(",") if item)
    warmup = int(options.get("warmup_steps", 0))
    if kind == "constant":
        main = torch.optim.lr_scheduler.ConstantLR(optimizer, factor=1.0, total_iters=0)
    elif kind == "step":
        main = torch.optim.lr_scheduler.StepLR(optimizer, step_size=int(options["step_size"]),
                                               gamma=float(options.get("gamma", 0.1)))
    else:
        main = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total - warmup,
                                                          eta_min=float(options.get("min_lr", 0.0)))
    if warmup == 0:
        return main
    linear = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=float(options.get("warmup_start_factor", 0.1)),
                                               end_factor=1.0, total_iters=warmup)
    return torch.optim.lr_scheduler.SequentialLR(optimizer, schedulers=[linear, main], milestones=[warmup])


SCHEDULES = [
    ("constant", 0.1, 6),
    ("constant,warmup_steps=4,warmup_start_factor=0.25", 0.1, 10),
    ("step,step_size=3,gamma=0.5", 0.2, 12),
    ("step,step_size=2,gamma=0.1,warmup_steps=3", 0.05, 12),
    ("cosine", 0.1, 10),
    ("cosine,min_lr=0.001", 0.4, 17),
    ("cosine,min_lr=0.0001,warmup_steps=5,warmup_start_factor=0.01", 0.1, 25),
]


def schedule_lines():
    lines = []
    for spec, base_lr, total in SCHEDULES:
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=base_lr)
        scheduler = schedulers_for(optimizer, spec, total)
        lrs = []
        for _ in range(total + 1):  # the lr of update k is lrs[k - 1]; lrs[total] is after the last
            lrs.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            scheduler.step()
        lines.append("schedule %s base_lr=%r total_steps=%d" % (spec, base_lr, total))
        lines.append("lrs " + floats(lrs, "%.17g"))
    return lines


def main():
    os.makedirs(OUT, exist_ok=True)
    header = "# Generated by scripts/gen_optimizer_reference.py with torch %s; do not edit.\n" % torch.__version__
    with open(os.path.join(OUT, "optimizer_steps.txt"), "w") as f:
        f.write(header + "\n".join(optimizer_lines()) + "\n")
    with open(os.path.join(OUT, "lr_schedules.txt"), "w") as f:
        f.write(header + "\n".join(schedule_lines()) + "\n")


if __name__ == "__main__":
    main()
