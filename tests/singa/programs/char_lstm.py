"""A character model in the style of SINGA's examples/rnn/char_rnn.py, on synthetic text: a
Model whose initialize() makes the LSTM's state Tensors, layer.LSTM called on a list of one-hot
steps and returning (list_of_h, h, c), the state carried with copy_data, Cat + Reshape +
Linear over all steps, labels as an int32 column, and the eval loss read as
autograd.softmax_cross_entropy(y, labels)[0]; then char_rnn.py's interactive sampling: asked
``[y/n]``, on ``y`` it reads seeding text, runs it through the model one batch-1 step per
character and draws each next character from ``tensor.to_numpy(tensor.softmax(outputs[-1]))[0]``
(SINGA's ``t[-1]`` keeps the row axis, so that is the last step's probability row).

    printf 'y\nab\nn\n' | python -m autograd.singa --cpu char_lstm.py -m 6

The text cycles through a small alphabet from random offsets, so the next character is
predictable. Prints ``epoch <i> loss <mean loss per step>``, then ``eval_shape <shape>``,
``eval_loss <loss>`` and ``eval_accuracy <fraction>`` of next-character predictions, and for
each sample ``sample <seed and the characters drawn>`` (the alphabet is ``abcd``).
"""
from singa import device
from singa import tensor
from singa import autograd
from singa import layer
from singa import model
from singa import opt
import numpy as np
import argparse
import sys

CHARS = 'abcd'


class CharLSTM(model.Model):

    def __init__(self, vocab_size, hidden_size=16):
        super(CharLSTM, self).__init__()
        self.lstm = layer.LSTM(vocab_size, hidden_size)
        self.cat = layer.Cat()
        self.to_rows = layer.Reshape()
        self.dense = layer.Linear(hidden_size, vocab_size)
        self.label_column = layer.Reshape()
        self.loss_fn = layer.SoftMaxCrossEntropy()
        self.hidden_size = hidden_size

    def initialize(self, steps):
        batch = steps[0].shape[0]
        self.hx = tensor.Tensor((batch, self.hidden_size))
        self.cx = tensor.Tensor((batch, self.hidden_size))
        self.reset_states(steps[0].device)

    def reset_states(self, dev):
        for state in (self.hx, self.cx):
            state.to_device(dev)
            state.set_value(0.0)

    def forward(self, steps):
        hs, h, c = self.lstm(steps, (self.hx, self.cx))
        self.hx.copy_data(h)
        self.cx.copy_data(c)
        rows = self.to_rows(self.cat(hs), (-1, self.hidden_size))
        return self.dense(rows)

    def train_one_batch(self, steps, labels):
        out = self.forward(steps)
        loss = self.loss_fn(out, self.label_column(labels, (-1, 1)))
        self.optimizer(loss)
        return out, loss


def batches(rng, num, batch_size, seq_length, vocab_size):
    """(num, batch, seq_length + 1) characters: runs of the alphabet from random offsets."""
    starts = rng.integers(0, vocab_size, size=(num, batch_size, 1))
    return ((starts + np.arange(seq_length + 1)) % vocab_size).astype(np.int32)


def to_tensors(batch, vocab_size, dev, steps=None, labels=None):
    """One-hot steps (time major) and the next characters as a column, refilled in place."""
    onehot = np.eye(vocab_size, dtype=np.float32)[batch[:, :-1]]
    time_major = np.swapaxes(onehot, 0, 1)
    column = np.swapaxes(batch[:, 1:], 0, 1).reshape((-1, 1))
    if steps:
        for step, values in zip(steps, time_major):
            step.copy_from_numpy(values)
        labels.copy_from_numpy(column)
    else:
        steps = [tensor.from_numpy(np.ascontiguousarray(values)) for values in time_major]
        for step in steps:
            step.to_device(dev)
        labels = tensor.from_numpy(column)
        labels.to_device(dev)
    return steps, labels


def sample(net, vocab_size, dev, nsamples=12, use_max=False):
    while True:
        cmd = input('Do you want to sample text from the model [y/n]')
        if cmd == 'n':
            return
        seed = input('Please input some seeding text, e.g., abc: ')
        inputs = []
        for c in seed:
            x = np.zeros((1, vocab_size), dtype=np.float32)
            x[0, CHARS.index(c)] = 1
            tx = tensor.from_numpy(x)
            tx.to_device(dev)
            inputs.append(tx)
        net.reset_states(dev)
        outputs = net(inputs)
        y = tensor.softmax(outputs[-1])
        sys.stdout.write('\nsample ' + seed)
        for i in range(nsamples):
            prob = tensor.to_numpy(y)[0]
            if use_max:
                cur = np.argmax(prob)
            else:
                cur = np.random.choice(vocab_size, 1, p=prob)[0]
            sys.stdout.write(CHARS[cur])
            x = np.zeros((1, vocab_size), dtype=np.float32)
            x[0, cur] = 1
            tx = tensor.from_numpy(x)
            tx.to_device(dev)
            outputs = net([tx])
            y = tensor.softmax(outputs[-1])
        sys.stdout.write('\n')


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-m', type=int, default=6, help='max num of epoch')
    parser.add_argument('-b', type=int, default=8, help='batch_size')
    parser.add_argument('-l', type=int, default=6, help='sequence length')
    args = parser.parse_args()
    vocab_size, num_batches = 4, 4

    dev = device.create_cuda_gpu()
    dev.SetRandSeed(0)
    rng = np.random.default_rng(0)
    train_data = batches(rng, num_batches, args.b, args.l, vocab_size)
    net = CharLSTM(vocab_size)
    net.set_optimizer(opt.SGD(lr=0.5, momentum=0.9))
    net.graph(True, False)

    steps, labels = None, None
    for epoch in range(args.m):
        net.train()
        train_loss = 0.0
        for batch in train_data:
            steps, labels = to_tensors(batch, vocab_size, dev, steps, labels)
            out, loss = net(steps, labels)
            net.reset_states(dev)
            train_loss += tensor.to_numpy(loss)[0]
        print('epoch %d loss %f' % (epoch, train_loss / num_batches), flush=True)

    net.eval()
    steps, labels = to_tensors(batches(rng, 1, args.b, args.l, vocab_size)[0], vocab_size, dev,
                               steps, labels)
    net.reset_states(dev)
    y = net(steps)
    print('eval_shape %s' % (tuple(tensor.to_numpy(y).shape),))
    eval_loss = autograd.softmax_cross_entropy(y, labels)[0]
    print('eval_loss %f' % tensor.to_numpy(eval_loss)[0])
    predicted = np.argmax(tensor.to_numpy(y), axis=1)
    print('eval_accuracy %f' % (predicted == tensor.to_numpy(labels)[:, 0]).mean())
    np.random.seed(0)
    sample(net, vocab_size, dev)
