"""Arrays in and out without copies (Note [zero copy], python/src/arrays.h): NumPy arrays, buffers and
DLPack producers (PyTorch, a ctypes one) are read where they lie when dense; outputs go to PyTorch and
back without a copy (the same data pointer); GPU tensors run on the device (skipped without a GPU)."""

import numpy as np
import pytest

import ucudnn
from conftest import KDL_CPU, KDL_CUDA, KDL_OPENCL, FakeDlpack, tiny_model

try:
    import torch
except ImportError:  # python3-torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (python3-torch) is not installed")
needs_gpu = pytest.mark.skipif(not ucudnn.cuda_available(), reason="no CUDA GPU (or a build without CUDA)")


def address(array):
    return array.__array_interface__["data"][0]


def test_dense_numpy_and_buffers_are_read_in_place(tiny_cnn_input):
    x = np.ascontiguousarray(tiny_cnn_input)
    seen = ucudnn._ucudnn._import_array(x)
    assert (seen["data_ptr"], seen["copied"], seen["device"]) == (address(x), False, "cpu")
    assert seen["shape"] == [2, 3, 8, 8] and seen["dtype"] == np.float32
    seen = ucudnn._ucudnn._import_array(memoryview(x))
    assert (seen["data_ptr"], seen["copied"]) == (address(x), False)
    strided = x[:, :, ::2, :]
    seen = ucudnn._ucudnn._import_array(strided)
    assert seen["copied"] and seen["data_ptr"] != address(x)


@needs_torch
def test_torch_cpu_tensors_are_read_in_place(tiny_cnn_session, tiny_cnn_input):
    t = torch.from_numpy(tiny_cnn_input.copy())
    seen = ucudnn._ucudnn._import_array(t)
    assert (seen["data_ptr"], seen["copied"], seen["device"]) == (t.data_ptr(), False, "cpu")
    transposed = t.transpose(2, 3)
    seen = ucudnn._ucudnn._import_array(transposed)
    assert seen["copied"] and seen["shape"] == [2, 3, 8, 8]
    [want] = tiny_cnn_session.run(None, {"input": transposed.contiguous().numpy()})
    got = tiny_cnn_session.run_dlpack({"input": transposed})["output"]  # strided: copied, same values
    np.testing.assert_array_equal(got, want)


@needs_torch
def test_outputs_round_trip_through_torch_without_copies(tiny_cnn_session, tiny_cnn_input):
    y = tiny_cnn_session.run_dlpack({"input": torch.from_numpy(tiny_cnn_input.copy())})["output"]
    assert isinstance(y, np.ndarray)
    [want] = tiny_cnn_session.run(None, {"input": tiny_cnn_input})
    np.testing.assert_array_equal(y, want)
    t = torch.from_dlpack(y)                                        # ucudnn → PyTorch
    assert t.data_ptr() == address(y)
    assert ucudnn._ucudnn._import_array(t)["data_ptr"] == address(y)  # PyTorch → ucudnn
    back = np.from_dlpack(t)                                        # PyTorch → NumPy
    assert address(back) == address(y)


def test_a_dlpack_array_is_released_once(tiny_cnn_session, tiny_cnn_input):
    x = np.ascontiguousarray(tiny_cnn_input)
    fake = FakeDlpack(KDL_CPU, x.shape, data=address(x), keep=x)
    assert ucudnn._ucudnn._import_array(fake)["data_ptr"] == address(x)
    assert fake.deleted == 1
    [want] = tiny_cnn_session.run(None, {"input": x})
    got = tiny_cnn_session.run_dlpack({"input": fake})["output"]
    np.testing.assert_array_equal(got, want)
    assert fake.deleted == 2


def test_strided_host_dlpack_arrays_are_copied_right(tiny_cnn_session, tiny_cnn_input):
    # The input's last two dims stored transposed: strides in elements, as DLPack has them.
    stored = np.ascontiguousarray(tiny_cnn_input.transpose(0, 1, 3, 2))
    fake = FakeDlpack(KDL_CPU, (2, 3, 8, 8), strides=(192, 64, 1, 8), data=address(stored), keep=stored)
    [want] = tiny_cnn_session.run(None, {"input": tiny_cnn_input})
    np.testing.assert_array_equal(tiny_cnn_session.run_dlpack({"input": fake})["output"], want)
    assert fake.deleted == 1


def test_gpu_memory_on_a_cpu_session_is_refused(tiny_cnn_session):
    fake = FakeDlpack(KDL_CUDA, (2, 3, 8, 8))  # never read: refused before any run
    with pytest.raises(ValueError, match="GPU memory: this session runs on the CPU"):
        tiny_cnn_session.run_dlpack({"input": fake})
    assert fake.deleted == 1
    strided = FakeDlpack(KDL_CUDA, (2, 3, 8, 8), strides=(192, 64, 1, 8))
    with pytest.raises(ValueError, match="strided GPU array"):
        tiny_cnn_session.run_dlpack({"input": strided})
    with pytest.raises(ValueError, match="neither host memory nor a CUDA GPU"):
        tiny_cnn_session.run_dlpack({"input": FakeDlpack(KDL_OPENCL, (2, 3, 8, 8))})
    with pytest.raises(ValueError, match="DLPack dtype"):
        tiny_cnn_session.run_dlpack({"input": FakeDlpack(KDL_CPU, (2, 3, 8, 8), dtype=(2, 8, 1))})  # 8-bit float


@needs_gpu
def test_gpu_session_runs_gpu_tensors_in_place(cpu_options, tiny_cnn_input):
    gpu_options = dict(device="cuda", math="fp32", benchmark_db=cpu_options["benchmark_db"], progress=False)
    s = ucudnn.InferenceSession(tiny_model("tiny_cnn"), batch=2, **gpu_options)
    cpu = ucudnn.InferenceSession(tiny_model("tiny_cnn"), batch=2, **cpu_options)
    [want] = cpu.run(None, {"input": tiny_cnn_input})
    x = ucudnn.GpuTensor.upload(tiny_cnn_input)
    assert ucudnn._ucudnn._import_array(x)["data_ptr"] == x.data_ptr
    y = s.run_dlpack({"input": x})["output"]
    assert isinstance(y, ucudnn.GpuTensor) and y.shape == (2, 5) and y.device == "cuda:0"
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-4, atol=1e-5)
    from_host = s.run_dlpack({"input": tiny_cnn_input})["output"]  # host inputs are uploaded
    np.testing.assert_allclose(from_host.numpy(), want, rtol=1e-4, atol=1e-5)
    [host] = s.run(None, {"input": tiny_cnn_input})
    np.testing.assert_allclose(host, want, rtol=1e-4, atol=1e-5)
    out = ucudnn.GpuTensor.allocate([2, 5], "float32")
    binding = s.io_binding()
    binding.bind_input("input", x)
    binding.bind_output("output", out)
    s.run_with_iobinding(binding)
    assert binding.get_outputs()[0] is out
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-5)
    if torch is not None and torch.cuda.is_available():
        t = torch.from_dlpack(y)
        assert t.data_ptr() == y.data_ptr and t.is_cuda
        z = s.run_dlpack({"input": torch.from_numpy(tiny_cnn_input).cuda()})["output"]
        np.testing.assert_allclose(torch.from_dlpack(z).cpu().numpy(), want, rtol=1e-4, atol=1e-5)
