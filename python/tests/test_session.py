"""InferenceSession as ONNX Runtime's: get_inputs/get_outputs, run(output_names, feed) -> list of arrays,
options by keyword or SessionOptions, IOBinding; outputs against the models' reference outputs (NumPy or
ONNX Runtime, models/make_tiny_models.py) and against the command line run on the same input."""

import json
import subprocess

import numpy as np
import pytest

import ucudnn
from conftest import TINY_MODELS, assert_close_to_reference, cli_path, read_pb, tiny_dir, tiny_model


def test_inputs_and_outputs_as_onnx_runtime_names_them(tiny_cnn_session):
    s = tiny_cnn_session
    [i] = s.get_inputs()
    [o] = s.get_outputs()
    assert (i.name, i.shape, i.type, i.dtype) == ("input", [2, 3, 8, 8], "tensor(float)", np.dtype(np.float32))
    assert (o.name, o.shape, o.type) == ("output", [2, 5], "tensor(float)")
    assert s.get_providers() == ["CPUExecutionProvider"]
    assert s.device == ucudnn.Device.CPU
    assert s.get_session_options().batch == 2


@pytest.mark.parametrize("name", TINY_MODELS)
def test_run_matches_the_models_reference_outputs(name, cpu_options):
    input_name, x = read_pb(tiny_dir(name) / "test_data_set_0" / "input_0.pb")
    _, want = read_pb(tiny_dir(name) / "test_data_set_0" / "output_0.pb")
    s = ucudnn.InferenceSession(tiny_model(name), batch=x.shape[0], **cpu_options)
    outputs = s.run(None, {input_name or s.get_inputs()[0].name: x})
    assert isinstance(outputs, list) and len(outputs) == 1
    assert_close_to_reference(outputs[0], want)


def test_run_equals_the_command_line_on_the_same_input(tmp_path, tiny_cnn_session, tiny_cnn_input, cpu_options):
    cli = cli_path()
    if cli is None:
        pytest.skip("the ucudnn command line is not built (UCUDNN_CLI)")
    np.save(tmp_path / "x.npy", tiny_cnn_input)
    subprocess.run([cli, "run", tiny_model("tiny_cnn"), "--device", "cpu", "--input", f"input={tmp_path / 'x.npy'}",
                    "--output-dir", str(tmp_path), "--threads", "1", "--layout", "nchw", "--batch-groups", "1",
                    "--db", cpu_options["benchmark_db"], "--iterations", "1", "--warmup", "0", "--quiet", "--json"],
                   check=True, stdout=subprocess.DEVNULL)
    _, want = read_pb(tmp_path / "output.pb")
    [got] = tiny_cnn_session.run(None, {"input": tiny_cnn_input})
    # The same library, plan (one database) and thread count: the same bits.
    np.testing.assert_array_equal(got, want)


def test_output_names_choose_and_order_the_outputs(tiny_cnn_session, tiny_cnn_input):
    everything = tiny_cnn_session.run(None, {"input": tiny_cnn_input})
    named = tiny_cnn_session.run(["output", "output"], {"input": tiny_cnn_input})
    assert len(named) == 2
    np.testing.assert_array_equal(named[0], everything[0])
    np.testing.assert_array_equal(named[1], everything[0])
    with pytest.raises(ValueError, match="no output 'logits'"):
        tiny_cnn_session.run(["logits"], {"input": tiny_cnn_input})


def test_inputs_in_any_layout_give_the_same_outputs(tiny_cnn_session, tiny_cnn_input):
    [want] = tiny_cnn_session.run(None, {"input": tiny_cnn_input})
    fortran = np.asfortranarray(tiny_cnn_input)
    assert not fortran.flags.c_contiguous
    [got] = tiny_cnn_session.run(None, {"input": fortran})
    np.testing.assert_array_equal(got, want)
    readonly = tiny_cnn_input.copy()
    readonly.flags.writeable = False
    [got] = tiny_cnn_session.run(None, {"input": readonly})
    np.testing.assert_array_equal(got, want)


def test_outputs_own_their_memory(cpu_options, tiny_cnn_input):
    s = ucudnn.InferenceSession(tiny_model("tiny_cnn"), batch=2, **cpu_options)
    [first] = s.run(None, {"input": tiny_cnn_input})
    kept = first.copy()
    [second] = s.run(None, {"input": np.zeros_like(tiny_cnn_input)})  # a later run leaves `first` alone
    assert first.flags.writeable and first.flags.c_contiguous
    assert first.__array_interface__["data"][0] != second.__array_interface__["data"][0]
    del s
    np.testing.assert_array_equal(first, kept)


def test_session_options_take_keywords_and_names(benchmark_db):
    o = ucudnn.SessionOptions(policy="wd", workspace="1MiB", layout="NHWC", batch_sizes="powerOfTwo", batch=4)
    assert o.policy == ucudnn.Policy.WD and o.layout == ucudnn.Layout.NHWC
    assert o.total_workspace_budget == 1 << 20 and o.kernel_workspace_limit == 64 << 20
    assert o.workspace == 1 << 20 and o.batch == 4
    o.kernel_workspace_limit = "unlimited"
    assert o.kernel_workspace_limit == ucudnn.UNLIMITED
    assert ucudnn.Policy("wr") == ucudnn.Policy.WR and ucudnn.Policy.WR.api_name == "wr"
    copy = ucudnn.SessionOptions(o, batch=8)
    assert copy.batch == 8 and o.batch == 4 and copy.policy == ucudnn.Policy.WD
    with pytest.raises(TypeError, match="unknown option 'batchsize'"):
        ucudnn.SessionOptions(batchsize=4)
    with pytest.raises(ValueError, match="Policy must be one of"):
        ucudnn.SessionOptions(policy="fastest")
    with pytest.raises(ValueError, match="cannot read 'lots'"):
        ucudnn.SessionOptions(workspace="lots")
    with pytest.raises(ValueError):
        ucudnn.SessionOptions(workspace=-1)


def test_options_object_and_providers_as_onnx_runtime(cpu_options, tiny_cnn_input):
    options = ucudnn.SessionOptions(batch=2, **cpu_options)
    s = ucudnn.InferenceSession(tiny_model("tiny_cnn"), options, providers=["CUDAExecutionProvider",
                                                                            "CPUExecutionProvider"])
    want = ucudnn.Device.CUDA if ucudnn.cuda_available() else ucudnn.Device.CPU
    assert s.device == want
    with pytest.raises(ValueError, match="unknown providers"):
        ucudnn.InferenceSession(tiny_model("tiny_cnn"), options, providers=["TensorrtExecutionProvider"])


def test_profile_memory_and_plan(tiny_cnn_session, tiny_cnn_input):
    steps = tiny_cnn_session.profile({"input": tiny_cnn_input})
    assert {"Conv"} <= {step["op"] for step in steps}
    assert all(step["ms"] >= 0 for step in steps)
    memory = tiny_cnn_session.memory()
    assert memory["weight_bytes"] > 0 and memory["peak_bytes"] >= memory["arena_bytes"]
    plan = json.loads(tiny_cnn_session.plan_json())
    assert plan["device"] == "cpu"
    assert tiny_cnn_session.layout == ucudnn.Layout.NCHW


def test_io_binding_writes_bound_outputs_in_place(tiny_cnn_session, tiny_cnn_input):
    [want] = tiny_cnn_session.run(None, {"input": tiny_cnn_input})
    binding = tiny_cnn_session.io_binding()
    binding.bind_input("input", tiny_cnn_input)
    out = np.full((2, 5), np.nan, dtype=np.float32)
    binding.bind_output("output", out)
    tiny_cnn_session.run_with_iobinding(binding)
    np.testing.assert_array_equal(out, want)
    assert binding.get_outputs()[0] is out
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], want)
    binding.clear_binding_outputs()
    tiny_cnn_session.run_with_iobinding(binding)  # unbound: allocated by the run
    np.testing.assert_array_equal(binding.get_outputs()[0], want)
    with pytest.raises(ValueError, match="written in place"):
        binding.bind_output("output", np.zeros((5, 2), dtype=np.float32).T)
        tiny_cnn_session.run_with_iobinding(binding)
    with pytest.raises(ValueError, match="no input 'x'"):
        binding.bind_input("x", tiny_cnn_input)
