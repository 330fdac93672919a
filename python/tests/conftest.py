"""Shared fixtures of the Python binding's tests (python/CMakeLists.txt runs them under CTest).

The models are the tiny committed ones (models/tiny, tests/data/training) found through
$UCUDNN_SOURCE_DIR (CTest sets it), else the checkout these tests lie in. Every session of a test run
shares one benchmark database in a temporary folder, so the tiny convolutions are measured once.
"""

import ctypes
import os
import pathlib

import numpy as np
import pytest

import ucudnn

SOURCE_DIR = pathlib.Path(os.environ.get("UCUDNN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
TINY_MODELS = ["tiny_branches", "tiny_cnn", "tiny_decoder", "tiny_downsample", "tiny_reshape", "tiny_residual",
               "tiny_upsample"]


def tiny_dir(name):
    return SOURCE_DIR / "models" / "tiny" / name


def tiny_model(name):
    return str(tiny_dir(name) / "model.onnx")


def read_pb(path):
    """A TensorProto file's name and values, read by ONNX's own code when it is installed."""
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        return None, ucudnn.load_tensor(str(path))
    proto = onnx.load_tensor(str(path))
    return proto.name, numpy_helper.to_array(proto)


def assert_close_to_reference(got, want, rtol=1e-4):
    """tests/models/compare_outputs.py's rule: max |got - want| <= rtol * max |want|."""
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = max(float(np.abs(want).max()), 1e-30)
    error = float(np.abs(got.astype(np.float64) - want).max())
    assert error <= rtol * scale, f"max abs error {error} > {rtol} x {scale}"


@pytest.fixture(scope="session")
def benchmark_db(tmp_path_factory):
    return str(tmp_path_factory.mktemp("db") / "benchmarks.sqlite")


@pytest.fixture(scope="session")
def cpu_options(benchmark_db):
    """Deterministic CPU options: one thread, NCHW, no batch groups (the CLI gets the same flags)."""
    return dict(device="cpu", threads=1, layout="nchw", batch_groups=1, benchmark_db=benchmark_db, progress=False)


@pytest.fixture(scope="session")
def tiny_cnn_session(cpu_options):
    return ucudnn.InferenceSession(tiny_model("tiny_cnn"), batch=2, **cpu_options)


@pytest.fixture(scope="session")
def tiny_cnn_input():
    _, x = read_pb(tiny_dir("tiny_cnn") / "test_data_set_0" / "input_0.pb")
    return x


def cli_path():
    """The `ucudnn` command line these tests compare with: $UCUDNN_CLI (CTest), else the build's."""
    path = os.environ.get("UCUDNN_CLI")
    if not path:
        try:
            from ucudnn._cli_path import CLI as path
        except ImportError:
            path = None
    return path if path and os.path.isfile(path) else None


# --- A DLPack producer written with ctypes: a tensor anywhere, with any strides, whose deleter counts calls.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

KDL_CPU, KDL_CUDA, KDL_OPENCL = 1, 2, 4


class FakeDlpack:
    """An object with __dlpack__ over `data` (an address; never read unless the consumer reads it)."""

    def __init__(self, device_type, shape, strides=None, data=0x1000, dtype=(2, 32, 1), keep=None):
        self.device_type = device_type
        self.deleted = 0
        self._keep = keep  # what owns the memory at `data`
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._strides = (ctypes.c_int64 * len(shape))(*strides) if strides is not None else None
        self._deleter = _Deleter(self._on_delete)
        self._managed = _DLManagedTensor()
        t = self._managed.dl_tensor
        t.data, t.device, t.ndim = data, _DLDevice(device_type, 0), len(shape)
        t.dtype = _DLDataType(*dtype)
        t.shape = self._shape
        t.strides = self._strides if self._strides is not None else None
        self._managed.deleter = self._deleter

    def _on_delete(self, _managed):
        self.deleted += 1

    def __dlpack__(self, stream=None):
        return _capsule_new(ctypes.addressof(self._managed), b"dltensor", None)

    def __dlpack_device__(self):
        return (self.device_type, 0)
