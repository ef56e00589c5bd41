"""ONNX inference: networks imported with ``autograd.onnx.load`` against onnxruntime
(CPUExecutionProvider, the same thread count), interleaved in one process.

``python -m benchmarks --only onnx`` (or ``python -m benchmarks.onnx_models``) times the light
ResNet-50 and SqueezeNet that ship inside the onnx wheel at batch 1 and 8, forward only in
eval mode, and prints milliseconds per batch and the ratio autograd / onnxruntime (target:
at most 1.5x), in wall time and in CPU time; ``unfused`` is the CPU-time ratio of the same
network run node by node (``autograd.onnx.import_inference.unfused``: without the fused
steps of passes that record nothing), interleaved with the other two: before and after those
fusions in one run. The batch axis of the shipped graphs is made symbolic first.

The light models store no weights: each is a ConstantOfShape node (every convolution kernel
the same 0.02), whose activations grow to ~1e30 and make the comparison of outputs
meaningless (softmax of rounding noise). :func:`_light_model` turns each into an initializer,
as a real network has: kernels drawn with He scaling (seeded), vectors (biases, BatchNorm's
statistics) kept at the constant the node gives.
"""
import os
import pathlib
import statistics
import time

import numpy as np

NAME = "onnx"
DESCRIPTION = "light ResNet-50 and SqueezeNet from the onnx wheel, eval forward, vs onnxruntime"
MODELS = ("resnet50", "squeezenet")
BATCHES = (1, 8)


def _light_model(name):
    import onnx
    path = pathlib.Path(onnx.__file__).parent / "backend/test/data/light" / f"light_{name}.onnx"
    model = onnx.load(str(path))
    initializers = {i.name for i in model.graph.initializer}
    for value in list(model.graph.input) + list(model.graph.output):
        if value.name not in initializers and value.type.tensor_type.shape.dim:
            value.type.tensor_type.shape.dim[0].dim_param = "batch"
    for node in model.graph.node:                 # a flatten to (1, features) -> (batch, ...)
        if node.op_type == "Reshape":
            for initializer in model.graph.initializer:
                if initializer.name == node.input[1]:
                    shape = onnx.numpy_helper.to_array(initializer).copy()
                    if shape[0] == 1:
                        shape[0] = 0
                        initializer.CopyFrom(onnx.numpy_helper.from_array(shape, initializer.name))
    _weights_as_initializers(model)
    return model


def _weights_as_initializers(model):
    """Each ConstantOfShape of a static shape -> an initializer (see the module docstring)."""
    from onnx import numpy_helper
    initializers = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    kept = []
    for node in model.graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in initializers:
            kept.append(node)
            continue
        shape = tuple(int(size) for size in initializers[node.input[0]])
        value = numpy_helper.to_array(node.attribute[0].t).reshape(-1)[0]
        if len(shape) >= 2:
            fan_in = int(np.prod(shape[1:]))
            array = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
        else:
            array = np.full(shape, value)
        model.graph.initializer.append(
            numpy_helper.from_array(array.astype(value.dtype), node.output[0]))
    del model.graph.node[:]
    model.graph.node.extend(kept)


def measure(threads=2, repetitions=7, quick=False, pause=0.2, settle=1):
    """{(model, batch): {"autograd_ms", "onnxruntime_ms", "ratio", "cpu_ratio"}}: medians of
    wall time, interleaved, and the ratio of the least CPU time (process_time) of each side.

    As in the other workloads, each timed run follows a ``pause`` (seconds) and ``settle``
    untimed runs of the same side: the threads that one side leaves spinning after a run
    (onnxruntime's spin by default) have stopped, and the side's own are awake."""
    import onnxruntime
    import autograd
    from autograd.onnx.import_inference import unfused
    results = {}
    for name in MODELS[:1] if quick else MODELS:
        model = _light_model(name)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3          # not the warnings about the unused initializers
        session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                               providers=["CPUExecutionProvider"])
        net = autograd.onnx.load(model)
        net.eval()
        input_name = session.get_inputs()[0].name
        shape = list(session.get_inputs()[0].shape[1:])
        for batch in BATCHES[:1] if quick else BATCHES:
            x = np.random.default_rng(0).random([batch] + shape, dtype=np.float32)
            ours = net(x).to_numpy()
            theirs = session.run(None, {input_name: x})[0]
            difference = float(np.abs(ours - theirs).max() / (np.abs(theirs).max() + 1e-12))
            times = {"autograd": [], "onnxruntime": [], "unfused": []}
            cpu = {"autograd": [], "onnxruntime": [], "unfused": []}

            def timed(side, function):
                wall, process = timed_run(function, pause, settle)
                times[side].append(wall)
                cpu[side].append(process)

            for _ in range(1 if quick else repetitions):
                with autograd.no_grad():
                    timed("autograd", lambda: net(x))
                timed("onnxruntime", lambda: session.run(None, {input_name: x}))
                with autograd.no_grad(), unfused():      # the graph node by node: the before
                    timed("unfused", lambda: net(x))
            ours_ms = statistics.median(times["autograd"]) * 1e3
            theirs_ms = statistics.median(times["onnxruntime"]) * 1e3
            # CPU time (all threads of the process): what a loaded machine disturbs least
            cpu_ratio = min(cpu["autograd"]) / max(min(cpu["onnxruntime"]), 1e-9)
            unfused_ratio = min(cpu["unfused"]) / max(min(cpu["onnxruntime"]), 1e-9)
            results[(name, batch)] = {"autograd_ms": round(ours_ms, 2),
                                      "onnxruntime_ms": round(theirs_ms, 2),
                                      "ratio": round(ours_ms / theirs_ms, 2),
                                      "cpu_ratio": round(cpu_ratio, 2),
                                      "unfused_cpu_ratio": round(unfused_ratio, 2),
                                      "relative_difference": difference}
    return results


_wall_clock, _cpu_clock = time.perf_counter, time.process_time


def timed_run(function, pause=0.0, settle=0):
    """(wall, CPU) seconds of one call of ``function``, made after ``pause`` seconds of sleep
    and ``settle`` untimed calls."""
    time.sleep(pause)
    for _ in range(settle):
        function()
    wall, process = _wall_clock(), _cpu_clock()
    function()
    return _wall_clock() - wall, _cpu_clock() - process


def format_results(results):
    lines = [f"{'model':12s} {'batch':>5s} {'autograd ms':>12s} {'onnxruntime ms':>15s} "
             f"{'ratio':>6s} {'cpu ratio':>9s} {'unfused':>8s} {'max rel diff':>12s}"]
    for (name, batch), row in results.items():
        lines.append(f"{name:12s} {batch:5d} {row['autograd_ms']:12.1f} "
                     f"{row['onnxruntime_ms']:15.1f} {row['ratio']:5.2f}x "
                     f"{row['cpu_ratio']:8.2f}x {row['unfused_cpu_ratio']:7.2f}x "
                     f"{row['relative_difference']:12.1e}")
    return "\n".join(lines)


def main():
    threads = int(os.environ.get("OMP_NUM_THREADS", "2"))
    print(format_results(measure(threads)))


if __name__ == "__main__":
    main()
