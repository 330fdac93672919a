"""plan() and Plan: the optimizer's choices without a session — summary, reports (text, JSON, HTML) and
the plan file, which a session then runs to the same outputs."""

import json

import numpy as np
import pytest

import ucudnn
from conftest import tiny_model


def test_plan_reports_and_saves(tmp_path, cpu_options, tiny_cnn_input):
    p = ucudnn.plan(tiny_model("tiny_cnn"), batch=2, policy="wd", workspace="1MiB", **cpu_options)
    summary = p.summary
    assert summary.device == "cpu" and summary.policy == ucudnn.Policy.WD
    assert summary.layout == ucudnn.Layout.NCHW
    assert summary.convolution_kernels == 2  # tiny_cnn's two convolutions differ in shape
    assert summary.kernels_benchmarked + summary.kernels_reused == 2
    text = p.report_text()
    assert "wd" in text
    report = json.loads(p.report_json())
    assert isinstance(report, dict) and report
    html = p.report_html()
    assert "<html" in html.lower() and "<svg" in html.lower()
    path = tmp_path / "tiny_cnn.plan.json"
    p.save(str(path))
    assert json.loads(path.read_text()) == json.loads(p.to_json())

    planned = ucudnn.InferenceSession(tiny_model("tiny_cnn"), batch=2, plan_path=str(path),
                                      **dict(cpu_options, layout="auto"))
    direct = ucudnn.InferenceSession(tiny_model("tiny_cnn"), batch=2, policy="wd", workspace="1MiB", **cpu_options)
    np.testing.assert_array_equal(planned.run(None, {"input": tiny_cnn_input})[0],
                                  direct.run(None, {"input": tiny_cnn_input})[0])
    assert json.loads(planned.plan_json()) == json.loads(p.to_json())


def test_plan_refuses_a_plan_path(tmp_path, cpu_options):
    with pytest.raises(ValueError, match="InvalidArgument"):
        ucudnn.plan(tiny_model("tiny_cnn"), plan_path=str(tmp_path / "x.json"), **cpu_options)
