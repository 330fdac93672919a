"""The GIL is released while a model loads and runs: a thread keeps running one session while another
thread loads a model, and runs on one session from several threads each get their own outputs."""

import threading
import time

import numpy as np

import ucudnn
from conftest import tiny_model


def test_a_thread_runs_while_another_loads(tmp_path, tiny_cnn_session, tiny_cnn_input, cpu_options):
    [want] = tiny_cnn_session.run(None, {"input": tiny_cnn_input})
    run_times, wrong, stop = [], [], threading.Event()

    def keep_running():
        while not stop.is_set():
            [y] = tiny_cnn_session.run(None, {"input": tiny_cnn_input})
            if not np.array_equal(y, want):
                wrong.append(y)
            run_times.append(time.perf_counter())

    runner = threading.Thread(target=keep_running)
    runner.start()
    try:
        while not run_times:  # the runner is going
            time.sleep(0.001)
        # A load that measures every convolution again into a new database: it takes a while, all of it
        # in C++. Holding the GIL through it would stop the runner for as long.
        options = dict(cpu_options, benchmark_db=str(tmp_path / "fresh.sqlite"), rebenchmark=True, threads=1)
        started = time.perf_counter()
        loaded = ucudnn.InferenceSession(tiny_model("tiny_downsample"), batch=8, **options)
        finished = time.perf_counter()
    finally:
        stop.set()
        runner.join()
    during = [t for t in run_times if started < t < finished]
    assert loaded.get_inputs()[0].shape == [8, 8, 8, 8]
    assert not wrong
    # Runs take ~0.1 ms: a released GIL lets dozens through while the load measures.
    assert len(during) >= 5, f"{len(during)} runs in the {finished - started:.3f} s the load took"


def test_runs_from_several_threads_get_their_own_outputs(tiny_cnn_session, tiny_cnn_input):
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal(tiny_cnn_input.shape).astype(np.float32) for _ in range(4)]
    want = [tiny_cnn_session.run(None, {"input": x})[0] for x in inputs]
    failures = []

    def run_many(k):
        for _ in range(50):
            [y] = tiny_cnn_session.run(None, {"input": inputs[k]})
            if not np.array_equal(y, want[k]):
                failures.append(k)

    threads = [threading.Thread(target=run_many, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
