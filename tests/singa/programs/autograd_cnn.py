"""A plain class of layers (no Model) trained by hand, in the style of SINGA's
examples/cnn/autograd/mnist_cnn.py: eager Conv2d(in, out, k) and Linear(in, out), int32
one-hot targets refilled with copy_from_numpy, autograd.training switched by assignment,
sgd(loss).

Prints ``epoch <i> loss <mean loss>``, ``eval_shape <shape>`` and ``eval_accuracy <fraction>``
(of the eval forward on the last training batch).
"""
from singa import singa_wrap as singa
from singa import autograd
from singa import layer
from singa import tensor
from singa import device
from singa import opt
import numpy as np
import argparse


class CNN:

    def __init__(self):
        self.conv1 = layer.Conv2d(1, 6, 3, padding=0)
        self.conv2 = layer.Conv2d(6, 8, 3, padding=0)
        self.linear1 = layer.Linear(2 * 2 * 8, 16)
        self.linear2 = layer.Linear(16, 4)
        self.pooling1 = layer.MaxPool2d(2, 2, padding=0)
        self.pooling2 = layer.MaxPool2d(2, 2, padding=0)
        self.relu1 = layer.ReLU()
        self.relu2 = layer.ReLU()
        self.relu3 = layer.ReLU()
        self.flatten = layer.Flatten()

    def forward(self, x):
        y = self.pooling1(self.relu1(self.conv1(x)))
        y = self.pooling2(self.relu2(self.conv2(y)))
        y = self.relu3(self.linear1(self.flatten(y)))
        return self.linear2(y)


def to_categorical(y, num_classes):
    categorical = np.zeros((y.shape[0], num_classes), np.float32)
    categorical[np.arange(y.shape[0]), y] = 1
    return categorical


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-m', '--max-epoch', default=4, type=int, dest='max_epoch')
    args = parser.parse_args()
    batch_size, num_classes = 8, 4
    rng = np.random.default_rng(0)
    templates = rng.standard_normal((num_classes, 1, 14, 14))
    labels = np.arange(2 * batch_size) % num_classes
    train_x = (templates[labels] + 0.5 * rng.standard_normal((2 * batch_size, 1, 14, 14)))
    train_x = train_x.astype(np.float32)
    train_y = to_categorical(labels, num_classes)

    sgd = opt.SGD(lr=0.05, momentum=0.9, weight_decay=1e-5)
    dev = device.get_default_device()
    dev.SetRandSeed(0)        # the layers draw their parameters from it: one fixed start
    model = CNN()
    tx = tensor.Tensor((batch_size, 1, 14, 14), dev, tensor.float32)
    ty = tensor.Tensor((batch_size, num_classes), dev, tensor.int32)
    for epoch in range(args.max_epoch):
        autograd.training = True
        train_loss = np.zeros(shape=[1], dtype=np.float32)
        for b in range(2):
            tx.copy_from_numpy(train_x[b * batch_size:(b + 1) * batch_size])
            ty.copy_from_numpy(train_y[b * batch_size:(b + 1) * batch_size])
            out = model.forward(tx)
            loss = autograd.softmax_cross_entropy(out, ty)
            train_loss += tensor.to_numpy(loss)[0]
            sgd(loss)
        print('epoch %d loss %f' % (epoch, train_loss[0] / 2))

    autograd.training = False
    out_test = model.forward(tx)
    print('eval_shape %s' % (tuple(tensor.to_numpy(out_test).shape),))
    correct = (np.argmax(tensor.to_numpy(out_test), axis=1) == labels[batch_size:]).mean()
    print('eval_accuracy %f' % correct)
