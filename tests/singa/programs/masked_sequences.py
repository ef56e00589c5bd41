"""Sequences of several lengths in the style of SINGA's test/python/test_model.py
(test_rnn_with_seq_lengths and its LSTMModel3): layer.CudnnRNN(hidden_size, batch_first=True,
use_mask=True) called as self.lstm(x, seq_lengths=seq_lengths) with the lengths an int32
Tensor, autograd.reshape(y, (y.shape[0], -1)) and a layer.Linear head, compiled with
[x, seq_lengths], trained by m.forward, a loss and m.optimizer(loss).

    python -m autograd.singa --cpu masked_sequences.py -m 8

Each sequence has 2 to 6 real steps of word vectors from its class's vocabulary, then padding
of large noise that the layer must not read. Prints ``epoch <i> loss <mean loss>``,
``eval_shape`` and ``eval_accuracy``.
"""
from singa import autograd
from singa import layer
from singa import model
from singa import tensor
from singa import device
from singa import opt
import numpy as np
import argparse


class MaskedLSTM(model.Model):

    def __init__(self, hidden_size, mode='lstm'):
        super(MaskedLSTM, self).__init__()
        self.lstm = layer.CudnnRNN(hidden_size=hidden_size, batch_first=True,
                                   rnn_mode=mode, use_mask=True)
        self.l1 = layer.Linear(2)
        self.optimizer = opt.SGD(0.1, 0.9)

    def forward(self, x, seq_lengths):
        y = self.lstm(x, seq_lengths=seq_lengths)
        y = autograd.reshape(y, (y.shape[0], -1))
        y = self.l1(y)
        return y


def make_data(rng, num, seq_limit, embed):
    labels = np.arange(num) % 2
    words = rng.integers(0, 10, size=(num, seq_limit)) + 10 * labels[:, None]
    x = embed[words]
    lengths = rng.integers(2, seq_limit + 1, size=num).astype(np.int32)
    for b, length in enumerate(lengths):
        x[b, length:] = 50 * rng.standard_normal(x[b, length:].shape)
    return x.astype(np.float32), lengths, labels.astype(np.int32)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-m', '--max-epoch', default=8, type=int, dest='max_epoch')
    parser.add_argument('-b', '--batch-size', default=8, type=int, dest='bs')
    parser.add_argument('--mode', default='lstm', help='relu, tanh, lstm, gru')
    args = parser.parse_args()
    seq_limit, embed_size, hidden = 6, 4, 6

    dev = device.create_cuda_gpu_on(0)
    dev.SetRandSeed(0)
    rng = np.random.default_rng(0)
    embed = rng.standard_normal((20, embed_size)).astype(np.float32)
    x_train, len_train, y_train = make_data(rng, 4 * args.bs, seq_limit, embed)

    x = tensor.from_numpy(x_train[:args.bs])
    seq_lengths = tensor.from_numpy(len_train[:args.bs])
    y = tensor.from_numpy(y_train[:args.bs])
    m = MaskedLSTM(hidden, mode=args.mode)
    m.compile([x, seq_lengths], is_train=True, use_graph=False, sequential=False)

    m.train()
    for epoch in range(args.max_epoch):
        total = 0.0
        for i in range(len(x_train) // args.bs):
            batch = slice(i * args.bs, (i + 1) * args.bs)
            x.copy_from_numpy(x_train[batch])
            seq_lengths.copy_from_numpy(len_train[batch])
            y.copy_from_numpy(y_train[batch])
            out = m.forward(x, seq_lengths)
            loss = autograd.softmax_cross_entropy(out, y)
            m.optimizer(loss)
            total += tensor.to_numpy(loss)[0]
        print('epoch %d loss %f' % (epoch, total / (len(x_train) // args.bs)), flush=True)

    m.eval()
    x_test, len_test, y_test = make_data(rng, args.bs, seq_limit, embed)
    x.copy_from_numpy(x_test)
    seq_lengths.copy_from_numpy(len_test)
    scores = tensor.to_numpy(m.forward(x, seq_lengths))
    print('eval_shape %s' % (scores.shape,))
    print('eval_accuracy %f' % (y_test == np.argmax(scores, 1)).mean())
