"""A token tagger in the style of SINGA's examples/trans (train.py and model.py): SINGA's
device.create_cpu_device(), layer.Embedding(input_dim=, output_dim=), a sinusoid position
table as a Tensor, a Linear3D(layer.Layer) that makes its weights in initialize() and calls
device_check/dtype_check, per-example loops over x[b] (SINGA's indexing keeps the axis, so
autograd.squeeze follows), a causal mask built with tensor.from_numpy(np.triu(...)) (float64,
which SINGA stores as float32) and tensor.gt, masked scores by autograd.where(fill, scores,
mask), a SINGA-style LayerNorm over NumPy statistics, int32 input Tensors made as
tensor.Tensor(shape, dev, tensor.int32, data), model.graph(mode=False) and the accuracy
computed in train_one_batch.

    python -m autograd.singa --cpu attention_tagger.py -m 8

Each token's tag is its token plus one (mod the vocabulary). Prints ``epoch <i> loss <mean
loss>``, ``eval_shape`` and ``eval_accuracy``.
"""
from singa import autograd
from singa import device
from singa import layer
from singa import model
from singa import opt
from singa import tensor
from singa.tensor import Tensor
import numpy as np
import argparse


class Linear3D(layer.Layer):

    def __init__(self, in_features, out_features):
        super(Linear3D, self).__init__()
        self.in_features, self.out_features = in_features, out_features

    def initialize(self, x):
        self.W = Tensor(shape=(self.in_features, self.out_features), dtype=x.dtype,
                        requires_grad=True, stores_grad=True)
        self.W.gaussian(0.0, np.sqrt(2.0 / (self.in_features + self.out_features)))

    def forward(self, x):
        self.device_check(x, self.W)
        self.dtype_check(x, self.W)
        ys = []
        for i in range(x.shape[0]):
            xi = autograd.squeeze(x[i])                   # x[i] is (1, seq, features)
            ys.append(autograd.unsqueeze(autograd.matmul(xi, self.W), axis=[0]))
        return autograd.cat(ys, axis=0)


class LayerNorm(layer.Layer):

    def __init__(self, eps=1e-6):
        super(LayerNorm, self).__init__()
        self.eps = eps

    def forward(self, x):
        mean = np.mean(tensor.to_numpy(x), axis=-1, keepdims=True)
        var = np.var(tensor.to_numpy(x), axis=-1, keepdims=True)
        return autograd.div(autograd.sub(x, tensor.from_numpy(mean)),
                            tensor.from_numpy(np.sqrt(var + self.eps)))


class SelfAttention(layer.Layer):

    def __init__(self, d_model):
        super(SelfAttention, self).__init__()
        self.d_model = d_model
        self.W_Q, self.W_K = Linear3D(d_model, d_model), Linear3D(d_model, d_model)
        self.W_V = Linear3D(d_model, d_model)
        self.add = layer.Add()
        self.norm = LayerNorm()

    def forward(self, x, attn_mask):
        q, k, v = self.W_Q(x), self.W_K(x), self.W_V(x)
        scale = Tensor(shape=(1,), requires_grad=False, stores_grad=False)
        scale.set_value(np.sqrt(self.d_model))
        contexts = []
        for b in range(x.shape[0]):
            qb, kb, vb = (autograd.squeeze(t[b]) for t in (q, k, v))
            scores = autograd.div(autograd.matmul(qb, autograd.transpose(kb, [1, 0])), scale)
            mask_np = tensor.to_numpy(attn_mask[b])[0]
            fill = Tensor(shape=mask_np.shape, data=np.full(mask_np.shape, -1e6, np.float32),
                          requires_grad=False, stores_grad=False)
            scores = autograd.where(fill, scores, mask_np)
            attn = autograd.softmax(scores, axis=-1)
            contexts.append(autograd.unsqueeze(autograd.matmul(attn, vb), axis=[0]))
        return self.norm(self.add(autograd.cat(contexts, axis=0), x))


class Tagger(model.Model):

    def __init__(self, n_token, d_model=16):
        super(Tagger, self).__init__()
        self.n_token, self.d_model = n_token, d_model
        self.emb = layer.Embedding(input_dim=n_token, output_dim=d_model)
        self.attention = SelfAttention(d_model)
        self.out = Linear3D(d_model, n_token)
        self.soft_cross_entropy = layer.SoftMaxCrossEntropy()

    @staticmethod
    def positions(seq_len, d_model):
        angle = np.arange(seq_len)[:, None] / np.power(10000, 2 * (np.arange(d_model) // 2)
                                                         / d_model)
        table = np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))
        return Tensor(data=table.astype(np.float32), requires_grad=False)

    @staticmethod
    def causal_mask(tokens):
        batch, seq_len = tokens.shape
        later = tensor.from_numpy(np.triu(np.ones((batch, seq_len, seq_len)), k=1))
        padding = np.broadcast_to((tensor.to_numpy(tokens) == 0)[:, None, :],
                                  (batch, seq_len, seq_len)).astype(np.int32)
        return tensor.gt(later + tensor.from_numpy(padding.astype(np.float64)), 0)

    def forward(self, tokens):
        x = self.emb(tokens)
        x = autograd.add(x, self.positions(tokens.shape[1], self.d_model))
        x = self.attention(x, self.causal_mask(tokens))
        return self.out(x)

    def train_one_batch(self, tokens, tags):
        out = autograd.reshape(self.forward(tokens), [-1, self.n_token])
        tags_np = tensor.to_numpy(tags).reshape(-1).astype(np.int64)
        acc = np.mean(np.argmax(tensor.to_numpy(out), -1) == tags_np)
        loss = self.soft_cross_entropy(out, tensor.from_numpy(tags_np))
        self.opt(loss)
        return out, loss, acc

    def set_optimizer(self, opt):
        self.opt = opt


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-m', '--max-epoch', default=8, type=int, dest='max_epoch')
    parser.add_argument('-b', '--batch-size', default=8, type=int, dest='batch_size')
    args = parser.parse_args()
    n_token, seq_len, batch_size = 6, 5, args.batch_size

    dev = device.create_cpu_device()
    dev.SetRandSeed(0)
    rng = np.random.default_rng(0)
    tokens_np = rng.integers(1, n_token, size=(4 * batch_size, seq_len)).astype(np.int32)
    tags_np = (tokens_np % (n_token - 1) + 1).astype(np.int32)

    m = Tagger(n_token)
    m.set_optimizer(opt.SGD(lr=0.1, momentum=0.9))
    tx = tensor.Tensor((batch_size, seq_len), dev, tensor.int32,
                       np.zeros((batch_size, seq_len), dtype=np.int32))
    ty = tensor.Tensor((batch_size, seq_len), dev, tensor.int32,
                       np.zeros((batch_size, seq_len), dtype=np.int32))
    for epoch in range(args.max_epoch):
        m.train()
        m.graph(mode=False, sequential=False)
        total = 0.0
        for b in range(len(tokens_np) // batch_size):
            tx.copy_from_numpy(tokens_np[b * batch_size:(b + 1) * batch_size])
            ty.copy_from_numpy(tags_np[b * batch_size:(b + 1) * batch_size])
            out, loss, acc = m(tx, ty)
            total += tensor.to_numpy(loss)[0]
        print('epoch %d loss %f' % (epoch, total / (len(tokens_np) // batch_size)), flush=True)

    m.eval()
    test = rng.integers(1, n_token, size=(batch_size, seq_len)).astype(np.int32)
    tx.copy_from_numpy(test)
    scores = tensor.to_numpy(autograd.reshape(m(tx), [-1, n_token]))
    print('eval_shape %s' % (scores.shape,))
    want = (test % (n_token - 1) + 1).reshape(-1)
    print('eval_accuracy %f' % (np.argmax(scores, -1) == want).mean())
