"""ucudnn from Python: run, plan and train ONNX CNNs with μ-cuDNN's optimizer.

ONNX Runtime's names where they fit, PyTorch's DLPack habits for arrays::

    import ucudnn, numpy as np
    s = ucudnn.InferenceSession("model.onnx", device="cpu", batch=8, policy="wd", workspace="64MiB")
    [i.name for i in s.get_inputs()], s.get_inputs()[0].shape, s.get_inputs()[0].type
    outputs = s.run(None, {"input": np.random.rand(8, 3, 224, 224).astype(np.float32)})  # list of arrays
    y = s.run_dlpack({"input": torch_tensor})         # read in place; {name: array with __dlpack__}
    plan = ucudnn.plan("model.onnx", device="cuda", batch=256, policy="wd", workspace="64MiB")
    plan.report_html(); plan.save("model.plan.json")
    t = ucudnn.Trainer("cnn.onnx", batch=64, optimizer="sgd", lr=0.05, momentum=0.9)
    loss = t.step(images, labels); t.save("trained.onnx")

The classes are the C++ API's (include/ucudnn/ucudnn.h; ucudnn._ucudnn binds them). A failed call
raises the exception its Status code means, with the Status's text: ValueError (InvalidArgument,
InvalidModel, Unsupported, Infeasible), MemoryError (OutOfMemory), FileNotFoundError (NotFound),
RuntimeError (the rest). Loading, running, planning and training release the GIL.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from . import _ucudnn
from ._ucudnn import (
    UNLIMITED,
    BatchSizes,
    CudaGraph,
    Device,
    GpuTensor,
    IOBinding,
    Layout,
    Math,
    NodeArg,
    Optimizer,
    Plan,
    PlanSummary,
    Policy,
    StepResult,
    TrainOptions,
    __version__,
    check_model,
    cuda_available,
    load_tensor,
    save_tensor,
)

__all__ = [
    "BatchSizes", "CudaGraph", "Device", "GpuTensor", "IOBinding", "InferenceSession", "Layout", "Math",
    "NodeArg", "Optimizer", "Plan", "PlanSummary", "Policy", "SessionOptions", "StepResult", "TrainOptions",
    "Trainer", "UNLIMITED", "check_model", "cuda_available", "info", "load_tensor", "plan", "save_tensor",
]

PathLike = Union[str, "os.PathLike[str]"]

# Options set after the others whatever their order: `workspace` is the policy's own budget.
_LAST = ("workspace",)

_PROVIDERS = {"CPUExecutionProvider": Device.CPU, "CUDAExecutionProvider": Device.CUDA}


def _set_option(options: Any, name: str, value: Any) -> None:
    """options.name = value, for a field `options` has (TypeError for another name)."""
    kind = type(options)
    if name.startswith("_") or not hasattr(kind, name) or callable(getattr(kind, name)):
        raise TypeError(f"unknown option '{name}' for {kind.__name__}")
    setattr(options, name, value)


def _apply_options(options: Any, values: Mapping[str, Any]) -> None:
    """Sets each `values` item as an option of `options`, `workspace` after `policy`."""
    for name in sorted(values, key=lambda n: n in _LAST):
        _set_option(options, name, values[name])


class SessionOptions(_ucudnn.SessionOptions):
    """ucudnn::SessionOptions; keyword arguments set its fields::

        SessionOptions(device="cuda", batch=64, policy="wd", workspace="64MiB", layout="nhwc")

    Enums take their names as strings; sizes take bytes or "64MiB"/"unlimited"; `workspace` is the
    command line's --workspace (the wd budget under policy wd, else the per-convolution limit).
    """

    def __init__(self, other: Optional[_ucudnn.SessionOptions] = None, **options: Any) -> None:
        if other is None:
            super().__init__()
        else:
            super().__init__(other)
        _apply_options(self, options)


def _session_options(sess_options: Optional[_ucudnn.SessionOptions], providers: Optional[Sequence[Any]],
                     options: Mapping[str, Any]) -> SessionOptions:
    """A new SessionOptions: a copy of `sess_options`, the device of `providers`, then `options`."""
    result = SessionOptions(sess_options)
    if providers:
        names = [p[0] if isinstance(p, (tuple, list)) else p for p in providers]
        unknown = [n for n in names if n not in _PROVIDERS]
        if unknown:
            raise ValueError(f"unknown providers {unknown}; ucudnn has {sorted(_PROVIDERS)}")
        # ONNX Runtime takes the first provider that is available, the CPU always being one.
        usable = [_PROVIDERS[n] for n in names if _PROVIDERS[n] == Device.CPU or cuda_available()]
        result.device = usable[0] if usable else Device.CPU
    _apply_options(result, options)
    return result


class InferenceSession(_ucudnn.InferenceSession):
    """A loaded, planned model, as ONNX Runtime's InferenceSession::

        s = InferenceSession("model.onnx", device="cuda", batch=64, policy="wd", workspace="64MiB")
        s = InferenceSession("model.onnx", sess_options, providers=["CUDAExecutionProvider"])
        outputs = s.run(None, {"input": x})          # list of NumPy arrays
        y = s.run_dlpack({"input": torch_tensor})    # {name: NumPy array or GpuTensor}, no copies

    Shapes are fixed at load (`batch`, `input_shapes`): every run takes the NodeArgs' shapes.
    """

    def __init__(self, path_or_bytes: PathLike, sess_options: Optional[_ucudnn.SessionOptions] = None,
                 providers: Optional[Sequence[Any]] = None, provider_options: Optional[Sequence[Any]] = None,
                 **options: Any) -> None:
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            raise TypeError("ucudnn loads models from files: write the model's bytes to a .onnx file")
        del provider_options  # ONNX Runtime's per-provider settings: ucudnn's are the options
        self._options = _session_options(sess_options, providers, options)
        super().__init__(os.fspath(path_or_bytes), self._options)

    def get_session_options(self) -> SessionOptions:
        """The options the session was loaded with (a copy)."""
        return SessionOptions(self._options)

    def get_providers(self) -> list:
        """ONNX Runtime's name of the session's device."""
        return ["CUDAExecutionProvider" if self.device == Device.CUDA else "CPUExecutionProvider"]


def plan(model_path: PathLike, options: Optional[_ucudnn.SessionOptions] = None, **kwargs: Any) -> Plan:
    """Plans a model as loading a session with these options would, without the session::

        p = ucudnn.plan("model.onnx", device="cuda", batch=256, policy="wd", workspace="64MiB")
        print(p.report_text()); p.save("model.plan.json")
    """
    return _ucudnn.plan(os.fspath(model_path), _session_options(options, None, kwargs))


# Trainer keywords that are TrainOptions' (the others are the session's), with PyTorch's short names.
_TRAIN_ALIASES = {"lr": "learning_rate", "eps": "epsilon"}


class Trainer(_ucudnn.Trainer):
    """Trains an ONNX model whose first output is the logits [N, classes]::

        t = Trainer("cnn.onnx", batch=64, optimizer="sgd", lr=0.05, momentum=0.9, device="cuda")
        loss = t.step(images, labels)      # float32 images as the model's input, int64 labels [N]
        t.evaluate(images); t.checkpoint("last.ckpt"); t.save("trained.onnx")

    Keywords are TrainOptions' fields (optimizer, learning_rate or lr, momentum, weight_decay, nesterov,
    beta1, beta2, epsilon or eps, label_smoothing, seed) or SessionOptions' (device, batch, policy, ...).
    """

    def __init__(self, model_path: PathLike, options: Optional[TrainOptions] = None, **kwargs: Any) -> None:
        train = TrainOptions(options) if options is not None else TrainOptions()
        session = {}
        for name, value in kwargs.items():
            name = _TRAIN_ALIASES.get(name, name)
            if name != "session" and hasattr(TrainOptions, name):
                _set_option(train, name, value)
            else:
                session[name] = value
        _apply_options(train.session, session)
        super().__init__(os.fspath(model_path), train)


def info(model_path: Optional[PathLike] = None) -> dict:
    """This build ({'version', 'cuda_built', 'cuda_available', 'onednn'}), or with a model what
    `ucudnn info` shows of it ({'ir_version', 'opset', 'inputs', 'outputs', 'op_counts', ...})."""
    return _ucudnn.info(None if model_path is None else os.fspath(model_path))
