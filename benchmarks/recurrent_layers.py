"""The recurrent layers alone, without the language model's head: a 2-layer LSTM or GRU of
width 256 over (35, batch, 256), forward + backward of sum(h * w), CPU time per step on one
thread, autograd interleaved with torch's 2-layer nn.LSTM / nn.GRU (7 blocks of 3 steps), then
the hand-written NumPy floor (recurrent_floor.py).

    python -m benchmarks.recurrent_layers lstm [batch]      # or gru; batch defaults to 32

Run it with another checkout on PYTHONPATH to compare two versions of the layers.
"""
import os
import sys
import time

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import numpy as np        # noqa: E402  (the thread counts above must be set first)

import autograd           # noqa: E402
from benchmarks import recurrent_floor   # noqa: E402

STEPS, WIDTH, REPETITIONS, PER_BLOCK = 35, 256, 7, 3


def cpu_ms(step):
    start = time.process_time()
    for _ in range(PER_BLOCK):
        step()
    return (time.process_time() - start) / PER_BLOCK * 1e3


def main(kind="lstm", batch=32):
    import torch
    torch.set_num_threads(1)
    autograd.set_num_threads(1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((STEPS, batch, WIDTH)).astype(np.float32)
    w = rng.standard_normal((STEPS, batch, WIDTH)).astype(np.float32)
    layer_type = autograd.LSTM if kind == "lstm" else autograd.GRU
    layers = [layer_type(WIDTH, WIDTH, return_sequences=True) for _ in range(2)]
    x_ours, w_ours = autograd.Tensor(data=x), autograd.Tensor(data=w)

    def ours():
        h = x_ours
        for layer in layers:
            h, _ = layer(h)
        for _ in autograd.backward(autograd.sum(h * w_ours)):
            pass

    module = (torch.nn.LSTM if kind == "lstm" else torch.nn.GRU)(WIDTH, WIDTH, num_layers=2)
    x_torch, w_torch = torch.from_numpy(x), torch.from_numpy(w)

    def theirs():
        h, _ = module(x_torch)
        (h * w_torch).sum().backward()
        module.zero_grad(set_to_none=True)

    params = [(layer.W_ih.data, layer.W_hh.data, layer.b_ih.data, layer.b_hh.data)
              for layer in layers]
    forward = recurrent_floor.lstm_forward if kind == "lstm" else recurrent_floor.gru_forward
    backward = recurrent_floor.lstm_backward if kind == "lstm" else recurrent_floor.gru_backward

    def floor():
        h, saved = x, []
        for W_ih, W_hh, b_ih, b_hh in params:
            h, context = forward(h, W_ih, W_hh, b_ih, b_hh)
            saved.append(context)
        dh = w
        for (W_ih, W_hh, _, _), context in zip(params[::-1], saved[::-1]):
            dh = backward(dh, context, W_ih, W_hh)[0]

    times = {"autograd": [], "torch": [], "floor": []}
    for step in (ours, theirs, floor):
        step()
    for _ in range(REPETITIONS):
        for name, step in (("autograd", ours), ("torch", theirs), ("floor", floor)):
            times[name].append(cpu_ms(step))
    ratios = [a / b for a, b in zip(times["autograd"], times["torch"])]
    medians = {name: float(np.median(values)) for name, values in times.items()}
    print(f"{kind} 2x{WIDTH}, seq {STEPS}, batch {batch}, 1 thread, CPU ms per step "
          f"({os.path.dirname(os.path.dirname(autograd.__file__))}): autograd "
          f"{medians['autograd']:.1f}, torch {medians['torch']:.1f}, floor "
          f"{medians['floor']:.1f}; autograd/torch {np.median(ratios):.2f}x "
          f"(per block {min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main(*(sys.argv[1:2] or ["lstm"]), *(int(n) for n in sys.argv[2:3]))
