"""Train the digits CNN briefly, export it to ONNX, run the file in onnxruntime, and compare.

    python examples/export_onnx.py                   # 2 epochs, writes digits.onnx
    python examples/export_onnx.py --epochs 1 --output /tmp/cnn.onnx

Needs the onnx extra (``pip install -e ".[onnx]"``: onnx and onnxruntime). Prints how many test
images both agree on and the largest difference of their logits; then imports the file back
with ``autograd.onnx.load`` and checks that it gives the same logits again.
"""
import argparse
import importlib.util
import pathlib

import numpy as np

import autograd
from autograd import Tensor
from autograd.data import DataLoader, load_digits

HERE = pathlib.Path(__file__).resolve().parent


def _train_cnn_module():
    spec = importlib.util.spec_from_file_location("train_cnn", HERE / "train_cnn.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--epochs", type=int, default=2, help="training epochs before export")
    parser.add_argument("--output", default="digits.onnx", help="where to write the model")
    parser.add_argument("--limit-batches", type=int, default=None,
                        help="train on at most this many batches per epoch (quick checks)")
    args = parser.parse_args(argv)
    import onnxruntime

    (train_x, train_y), (test_x, test_y) = load_digits("train"), load_digits("test")
    autograd.manual_seed(0)
    model = _train_cnn_module().CNN(in_channels=1, num_classes=10)
    sgd = autograd.opt.SGD(lr=0.05, momentum=0.9)
    loader = DataLoader(train_x, train_y, batch_size=32, shuffle=True, seed=0)
    for epoch in range(args.epochs):
        model.train()
        for step, (x, y) in enumerate(loader):
            if args.limit_batches is not None and step >= args.limit_batches:
                break
            loss = autograd.softmax_cross_entropy(model(Tensor(data=x, requires_grad=False)), y)
            for param, grad in autograd.backward(loss):
                sgd.update(param, grad)
            sgd.step()

    autograd.onnx.export(model, [test_x[:1]], args.output)
    model.eval()
    ours = model(Tensor(data=test_x, requires_grad=False)).to_numpy()
    session = onnxruntime.InferenceSession(args.output, providers=["CPUExecutionProvider"])
    theirs = session.run(None, {"input": test_x})[0]
    agree = float((ours.argmax(axis=1) == theirs.argmax(axis=1)).mean())
    difference = float(np.abs(ours - theirs).max())
    imported = autograd.onnx.load(args.output)
    again = float(np.abs(imported(test_x).to_numpy() - ours).max())
    accuracy = float((theirs.argmax(axis=1) == test_y).mean())
    print(f"wrote {args.output}; onnxruntime and autograd agree on {agree:.2%} of "
          f"{len(test_x)} test images (onnxruntime's accuracy {accuracy:.2%}); largest logit "
          f"difference {difference:.2e}; imported back: {again:.2e}")
    return {"agreement": agree, "max_difference": difference, "imported_difference": again,
            "accuracy": accuracy}


if __name__ == "__main__":
    main()
