"""Training with autograd functions and hand-made parameters, in the style of SINGA's
examples/mlp/native.py: autograd.training set by assignment, Tensor(data=, device=), as_type
to int32 one-hot targets, sgd(loss).

Prints ``step <i> loss <value>``, ``eval_shape <shape>`` and ``eval_accuracy <fraction>``.
"""
from singa import tensor
from singa.tensor import Tensor
from singa import autograd
from singa import opt
import numpy as np
from singa import device
import argparse

singa_dtype = {"float16": tensor.float16, "float32": tensor.float32}

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('-m', '--max-epoch', default=30, type=int, dest='max_epoch')
    args = parser.parse_args()
    np.random.seed(0)
    autograd.training = True

    # points above or below the line y = 5x + 1
    x = np.random.uniform(-1, 1, 200)
    y = 5 * x + 1 + 2 * np.random.randn(len(x))
    label = np.asarray([5 * a + 1 > b for (a, b) in zip(x, y)]).astype(int)
    data = np.array([[a, b] for (a, b) in zip(x, y)], dtype=np.float32)
    onehot = np.zeros((len(label), 2), np.float32)
    onehot[np.arange(len(label)), label] = 1

    precision = singa_dtype["float32"]
    dev = device.get_default_device()
    inputs = Tensor(data=data, device=dev).as_type(precision)
    target = Tensor(data=onehot, device=dev).as_type(tensor.int32)

    w0 = Tensor(data=np.random.normal(0, 0.1, (2, 8)).astype(np.float32), device=dev,
                dtype=precision, requires_grad=True, stores_grad=True)
    b0 = Tensor(shape=(8,), device=dev, dtype=precision, requires_grad=True, stores_grad=True)
    b0.set_value(0.0)
    w1 = Tensor(data=np.random.normal(0, 0.1, (8, 2)).astype(np.float32), device=dev,
                dtype=precision, requires_grad=True, stores_grad=True)
    b1 = Tensor(shape=(2,), device=dev, dtype=precision, requires_grad=True, stores_grad=True)
    b1.set_value(0.0)

    sgd = opt.SGD(0.05, 0.8)
    for i in range(args.max_epoch):
        h = autograd.relu(autograd.add_bias(autograd.matmul(inputs, w0), b0))
        out = autograd.add_bias(autograd.matmul(h, w1), b1)
        loss = autograd.softmax_cross_entropy(out, target)
        sgd(loss)
        print("step %d loss %f" % (i, tensor.to_numpy(loss)[0]))

    autograd.training = False
    h = autograd.relu(autograd.add_bias(autograd.matmul(inputs, w0), b0))
    out = autograd.add_bias(autograd.matmul(h, w1), b1)
    print("eval_shape %s" % (tuple(tensor.to_numpy(out).shape),))
    print("eval_accuracy %f" % (np.argmax(tensor.to_numpy(out), axis=1) == label).mean())
