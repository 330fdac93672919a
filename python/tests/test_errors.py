"""Every bad input is a Python exception, never a crash (Note [exceptions], python/src/errors.h): the
Status's code picks the type (ValueError, MemoryError, FileNotFoundError, RuntimeError) and its text is
the message; the binding's own checks raise ValueError, TypeError for an object that is no array."""

import numpy as np
import pytest

import ucudnn
from conftest import SOURCE_DIR, tiny_model


def test_a_missing_model_is_file_not_found(cpu_options):
    with pytest.raises(FileNotFoundError, match="NotFound: model file '.*no_such.onnx' does not exist"):
        ucudnn.InferenceSession(str(SOURCE_DIR / "no_such.onnx"), **cpu_options)


def test_a_file_that_is_no_model_is_a_value_error(tmp_path, cpu_options):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not a protobuf \xff\xff\xff")
    with pytest.raises(ValueError, match="InvalidModel"):
        ucudnn.InferenceSession(str(bad), **cpu_options)
    with pytest.raises(ValueError, match="InvalidModel"):
        ucudnn.plan(str(bad), **cpu_options)


def test_bad_options_are_value_errors(cpu_options):
    with pytest.raises(ValueError, match="InvalidArgument"):
        ucudnn.InferenceSession(tiny_model("tiny_cnn"), **dict(cpu_options, threads=-1))
    with pytest.raises(ValueError, match="InvalidArgument"):
        ucudnn.SessionOptions(threads=-1).check()
    with pytest.raises(FileNotFoundError, match="NotFound"):
        ucudnn.InferenceSession(tiny_model("tiny_cnn"), **dict(cpu_options, plan_path="/no/such/plan.json"))


def test_inputs_of_the_wrong_dtype_shape_or_name(tiny_cnn_session, tiny_cnn_input):
    s = tiny_cnn_session
    with pytest.raises(ValueError, match=r"input 'input' must be float32\[2, 3, 8, 8\], got float64\[2, 3, 8, 8\]"):
        s.run(None, {"input": tiny_cnn_input.astype(np.float64)})
    with pytest.raises(ValueError, match=r"got float32\[1, 3, 8, 8\]"):
        s.run(None, {"input": tiny_cnn_input[:1]})
    with pytest.raises(ValueError, match="missing input 'input'"):
        s.run(None, {})
    with pytest.raises(ValueError, match="the model has no input 'image'"):
        s.run(None, {"input": tiny_cnn_input, "image": tiny_cnn_input})
    with pytest.raises(ValueError, match="float64"):
        s.run(None, {"input": tiny_cnn_input.tolist()})  # a list: NumPy makes it float64, as ONNX Runtime refuses
    with pytest.raises(ValueError, match=r"must be float32\[2, 3, 8, 8\], got float16\[2, 3, 8, 8\]"):
        s.run(None, {"input": np.zeros((2, 3, 8, 8), dtype=np.float16)})  # a half type, not this input's
    with pytest.raises(ValueError, match="NumPy dtype"):
        s.run(None, {"input": tiny_cnn_input.astype(">f4")})  # big-endian
    with pytest.raises(TypeError, match="expected an array"):
        s.run_dlpack({"input": object()})
    with pytest.raises(TypeError, match="input names must be str"):
        s.run(None, {0: tiny_cnn_input})
    with pytest.raises(TypeError):
        s.run(None, [tiny_cnn_input])  # the feed is a dict
    # The session still runs after all that.
    [y] = s.run(None, {"input": tiny_cnn_input})
    assert y.shape == (2, 5)


def test_exceptions_carry_the_status_text(cpu_options):
    with pytest.raises(ValueError) as caught:
        ucudnn.InferenceSession(tiny_model("tiny_cnn"), **dict(cpu_options, streams=3))
    assert str(caught.value).startswith("InvalidArgument: ") and "streams" in str(caught.value)


def test_a_plan_that_does_not_fit_in_memory_is_a_memory_error(cpu_options):
    # A batch whose activations no machine holds: the executor's memory check refuses it at load.
    with pytest.raises(MemoryError, match="OutOfMemory"):
        ucudnn.InferenceSession(tiny_model("tiny_cnn"), batch=1 << 40, **dict(cpu_options, batch_sizes="undivided"))


def test_trainer_inputs_are_checked(cpu_options):
    model = str(SOURCE_DIR / "tests" / "data" / "training" / "tiny_bn_cnn_sgd" / "model.onnx")
    t = ucudnn.Trainer(model, batch=4, **cpu_options)
    x = np.zeros((4, 1, 8, 8), dtype=np.float32)
    with pytest.raises(ValueError, match="labels must be int64"):
        t.step(x, np.zeros(4, dtype=np.float32))
    with pytest.raises(ValueError, match="InvalidArgument"):
        t.step(x, np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match=r"must be float32\[4, 1, 8, 8\]"):
        t.step(np.zeros((2, 1, 8, 8), dtype=np.float32), np.zeros(2, dtype=np.int64))
    with pytest.raises(FileNotFoundError):
        t.load_checkpoint(str(SOURCE_DIR / "no_such.ckpt"))
    assert t.steps_done == 0
    with pytest.raises(TypeError, match="unknown option 'learning_rat'"):
        ucudnn.Trainer(model, batch=4, learning_rat=0.1)
