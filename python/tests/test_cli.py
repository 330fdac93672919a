"""`python3 -m ucudnn` runs the command line; info() describes the build and models."""

import os
import subprocess
import sys

import pytest

import ucudnn
from conftest import cli_path, tiny_model


def run_module(*args):
    return subprocess.run([sys.executable, "-m", "ucudnn", *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=60)


def test_python_m_ucudnn_runs_the_command_line():
    if cli_path() is None:
        pytest.skip("the ucudnn command line is not built (UCUDNN_CLI)")
    done = run_module("info", tiny_model("tiny_cnn"))
    assert done.returncode == 0, done.stderr
    assert "supported:  yes" in done.stdout and "Conv" in done.stdout
    usage = run_module()
    assert usage.returncode == 2 and "usage: ucudnn" in usage.stderr
    missing = run_module("info", "/no/such/model.onnx")
    assert missing.returncode == 1 and "does not exist" in missing.stderr


def test_info_of_the_build_and_of_a_model():
    build = ucudnn.info()
    assert build["version"] == ucudnn.__version__
    assert build["cuda_available"] == ucudnn.cuda_available()
    assert not build["cuda_available"] or build["cuda_built"]
    model = ucudnn.info(tiny_model("tiny_cnn"))
    assert model["opset"] == 13 and model["op_counts"]["Conv"] == 2
    assert model["inputs"] == [{"name": "input", "dtype": "float32", "dims": ["batch", "3", "8", "8"]}]
    assert model["unsupported"] == [] and model["parameter_count"] == 465
    ucudnn.check_model(tiny_model("tiny_cnn"))


def test_tensor_files_round_trip(tmp_path):
    import numpy as np
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    ucudnn.save_tensor(str(tmp_path / "x.pb"), x, name="x")
    np.testing.assert_array_equal(ucudnn.load_tensor(str(tmp_path / "x.pb")), x)
