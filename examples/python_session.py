#!/usr/bin/python3
"""ucudnn from Python, notebook style: a session as with ONNX Runtime, arrays to and from PyTorch without
copies, the optimizer's plan and report, and a few training steps. Runs on the committed tiny models:

    cmake --build build --target ucudnn_python
    PYTHONPATH=build/python /usr/bin/python3 examples/python_session.py [--device cuda]
"""

import argparse
import pathlib
import tempfile

import numpy as np

import ucudnn

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODEL = str(ROOT / "models" / "tiny" / "tiny_cnn" / "model.onnx")
TRAIN_DIR = ROOT / "tests" / "data" / "training" / "tiny_bn_cnn_sgd"

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda" if ucudnn.cuda_available() else "cpu", choices=["cpu", "cuda"])
device = parser.parse_args().device
work = pathlib.Path(tempfile.mkdtemp(prefix="ucudnn-example-"))
print("ucudnn", ucudnn.info())

# %% A session, as ONNX Runtime's InferenceSession: options by keyword (or a SessionOptions).
session = ucudnn.InferenceSession(MODEL, device=device, batch=8, policy="wd", workspace="64MiB",
                                  benchmark_db=str(work / "benchmarks.sqlite"))
for node in session.get_inputs() + session.get_outputs():
    print(f"{node.name}: {node.type} {node.shape}")
x = np.random.default_rng(0).standard_normal(session.get_inputs()[0].shape).astype(np.float32)
[logits] = session.run(None, {"input": x})  # a list of NumPy arrays, in the order asked (None: all)
print("logits", logits.shape, "argmax", logits.argmax(axis=1))

# %% DLPack: arrays read where they lie, outputs handed to PyTorch without a copy.
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    t = torch.from_numpy(x)
    if device == "cuda" and torch.cuda.is_available():
        t = t.cuda()
    y = session.run_dlpack({"input": t})["output"]  # NumPy on the CPU, a GpuTensor on CUDA
    y_torch = torch.from_dlpack(y)                   # the same memory
    print("run_dlpack → torch:", y_torch.device, tuple(y_torch.shape),
          "max |difference| to run():", float((y_torch.cpu() - torch.from_numpy(logits)).abs().max()))

# %% The plan: what the optimizer chose per convolution, and why.
plan = ucudnn.plan(MODEL, device=device, batch=8, policy="wd", workspace="64MiB",
                   benchmark_db=str(work / "benchmarks.sqlite"))
print(plan.summary)
print(plan.report_text())
(work / "report.html").write_text(plan.report_html())
plan.save(str(work / "tiny_cnn.plan.json"))  # SessionOptions.plan_path runs it later
print("report and plan in", work)

# %% Training: SGD with momentum on a batch of four; the loss goes down.
trainer = ucudnn.Trainer(str(TRAIN_DIR / "model.onnx"), device=device, batch=4, optimizer="sgd", lr=0.1,
                         momentum=0.9, benchmark_db=str(work / "benchmarks.sqlite"))
images, labels = np.load(TRAIN_DIR / "input.npy"), np.load(TRAIN_DIR / "labels.npy")
for step in range(10):
    loss = trainer.step(images, labels)
    print(f"step {step + 1}: loss {loss:.4f}, correct {trainer.last_step.correct}/4")
trainer.checkpoint(str(work / "last.ckpt"))
trainer.save(str(work / "trained.onnx"))
print("trained model:", work / "trained.onnx")
