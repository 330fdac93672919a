"""Trainer: its steps against PyTorch's on the same model, batch and settings (tests/data/training,
written by scripts/training_reference.py), the loss going down, checkpoints that continue a run exactly,
and the saved model that runs as an inference session."""

import numpy as np
import pytest

import ucudnn
from conftest import SOURCE_DIR

REFERENCE = SOURCE_DIR / "tests" / "data" / "training" / "tiny_bn_cnn_sgd"


def config():
    return dict(line.split("=", 1) for line in (REFERENCE / "config.txt").read_text().split())


def new_trainer(cpu_options, **overrides):
    c = config()
    options = dict(batch=int(c["batch"]), optimizer=c["optimizer"], lr=float(c["lr"]), momentum=float(c["momentum"]),
                   weight_decay=float(c["weight_decay"]), device="cpu", benchmark_db=cpu_options["benchmark_db"],
                   progress=False, threads=1)
    options.update(overrides)
    return ucudnn.Trainer(str(REFERENCE / "model.onnx"), **options)


def batch():
    return np.load(REFERENCE / "input.npy"), np.load(REFERENCE / "labels.npy")


def test_steps_match_pytorch(cpu_options):
    t = new_trainer(cpu_options)
    x, y = batch()
    want = np.load(REFERENCE / "losses.npy")
    got = [t.step(x, y) for _ in range(len(want))]
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)  # tests/trainer_test.cc's CPU tolerance
    assert t.steps_done == len(want)
    assert isinstance(t.last_step, ucudnn.StepResult) and 0 <= t.last_step.correct <= len(y)
    assert float(t.last_step) == pytest.approx(got[-1])
    weights = t.weights()
    assert weights
    for name, value in weights.items():
        np.testing.assert_allclose(value, np.load(REFERENCE / "after" / f"{name}.npy"), rtol=2e-4, atol=2e-5,
                                   err_msg=name)


def test_the_loss_goes_down(cpu_options):
    t = new_trainer(cpu_options)
    x, y = batch()
    losses = [t.step({"input": x} if t.inputs[0].name == "input" else [x], y) for _ in range(15)]
    assert losses[-1] < 0.5 * losses[0], losses


def test_a_checkpoint_continues_the_run_exactly(tmp_path, cpu_options):
    x, y = batch()
    first = new_trainer(cpu_options)
    first.step(x, y)
    first.step(x, y)
    path = str(tmp_path / "last.ckpt")
    first.checkpoint(path, epoch=1)
    want = first.step(x, y)
    second = new_trainer(cpu_options)
    second.load_checkpoint(path)
    assert second.steps_done == 2
    assert second.step(x, y) == want
    other = new_trainer(cpu_options, optimizer="adamw", momentum=0.0)
    with pytest.raises(ValueError, match="saved with optimizer"):
        other.load_checkpoint(path)


def test_the_saved_model_runs_as_it_evaluates(tmp_path, cpu_options):
    t = new_trainer(cpu_options)
    x, y = batch()
    for _ in range(3):
        t.step(x, y)
    [evaluated] = t.evaluate(x)
    path = str(tmp_path / "trained.onnx")
    t.save(path)
    s = ucudnn.InferenceSession(path, batch=x.shape[0], **cpu_options)
    [ran] = s.run(None, {s.get_inputs()[0].name: x})
    np.testing.assert_allclose(ran, evaluated, rtol=1e-4, atol=1e-5)
    state = t.state()
    t.step(x, y)
    t.load_state(state)
    assert t.steps_done == 3
