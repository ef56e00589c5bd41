"""A sequence classifier in the style of SINGA's examples/rnn/imdb_train.py and imdb_model.py:
a Model with layer.CudnnRNN(hidden, batch_first=True, rnn_mode=..., return_sequences=False),
lazy layer.Linear(64) and Linear(2) after autograd.reshape, float one-hot targets, placeholder
Tensors filled with gaussian() and compiled with the graph asked for, then refilled with
copy_from_numpy for every batch.

    python -m autograd.singa --cpu sequence_classifier.py -m 6 --mode lstm

The sequences are word vectors whose words come from one of two vocabularies (the class).
Prints ``epoch <i> loss <mean loss>``, ``eval_shape`` and ``eval_accuracy``.
"""
from singa import autograd
from singa import layer
from singa import model
from singa import tensor
from singa import device
from singa import opt
import numpy as np
import argparse


class SequenceModel(model.Model):

    def __init__(self, hidden_size, mode='lstm', bidirectional=False):
        super().__init__()
        self.rnn = layer.CudnnRNN(hidden_size=hidden_size, batch_first=True, rnn_mode=mode,
                                  return_sequences=False, num_layers=1,
                                  bidirectional=bidirectional)
        self.l1 = layer.Linear(64)
        self.l2 = layer.Linear(2)

    def forward(self, x):
        y = self.rnn(x)
        y = autograd.reshape(y, (y.shape[0], -1))
        y = autograd.relu(self.l1(y))
        return self.l2(y)

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        self.optimizer(loss)
        return out, loss

    def set_opt(self, optimizer):
        self.optimizer = optimizer


def make_data(rng, num, seq_limit, embed):
    labels = np.arange(num) % 2
    words = rng.integers(0, 10, size=(num, seq_limit)) + 10 * labels[:, None]
    onehot = np.eye(2, dtype=np.float32)[labels]
    return embed[words], onehot, labels.astype(np.float32)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-m', '--max-epoch', default=6, type=int, dest='max_epoch')
    parser.add_argument('-b', '--batch-size', default=8, type=int, dest='bs')
    parser.add_argument('--mode', default='lstm', help='relu, tanh, lstm, gru')
    parser.add_argument('-d', '--bidirectional', default=False, action='store_true')
    args = parser.parse_args()
    seq_limit, embed_size, hidden = 6, 8, 8

    dev = device.create_cuda_gpu_on(0)
    dev.SetRandSeed(0)
    rng = np.random.default_rng(0)
    embed = rng.standard_normal((20, embed_size)).astype(np.float32)
    x_train, y_onehot_train, y_train = make_data(rng, 4 * args.bs, seq_limit, embed)

    tx = tensor.Tensor((args.bs, seq_limit, embed_size), dev, tensor.float32)
    ty = tensor.Tensor((args.bs, 2), dev, tensor.float32)
    tx.gaussian(0, 1)
    ty.gaussian(0, 1)
    m = SequenceModel(hidden, mode=args.mode, bidirectional=args.bidirectional)
    m.set_opt(opt.SGD(0.1, 0.9))
    m.compile([tx], is_train=True, use_graph=True, sequential=False)

    m.train()
    for epoch in range(args.max_epoch):
        total = 0.0
        for i in range(len(x_train) // args.bs):
            tx.copy_from_numpy(x_train[i * args.bs:(i + 1) * args.bs])
            ty.copy_from_numpy(y_onehot_train[i * args.bs:(i + 1) * args.bs])
            out, loss = m(tx, ty)
            total += tensor.to_numpy(loss)[0]
        print('epoch %d loss %f' % (epoch, total / (len(x_train) // args.bs)), flush=True)

    m.eval()
    x_test, _, y_test = make_data(rng, args.bs, seq_limit, embed)
    tx.copy_from_numpy(x_test)
    scores = tensor.to_numpy(m(tx))
    print('eval_shape %s' % (scores.shape,))
    print('eval_accuracy %f' % (y_test == np.argmax(scores, 1)).mean())
