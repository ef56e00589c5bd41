"""Two networks in one Model, trained in turns, in the style of SINGA's examples/gan
(vanilla.py driving model/gan_mlp.py) on synthetic data: each step updates only the
parameters whose SINGA name holds its network's prefix (``p.name``), and the discriminator's
step walks its loss twice (``autograd.backward(loss)``, then ``self.optimizer(loss)``), as
SINGA's does.

Prints ``step <i> loss <discriminator loss, real + fake> generator <its loss>``, then ``eval_shape <shape>`` and
``eval_accuracy <fraction>`` of the discriminator telling real rows from generated ones.
"""
from singa import autograd
from singa import device
from singa import layer
from singa import model
from singa import opt
from singa import tensor
import numpy as np
import argparse


class GAN_MLP(model.Model):

    def __init__(self, noise_size=8, feature_size=16, hidden_size=32):
        super(GAN_MLP, self).__init__()
        self.gen_net_fc_0 = layer.Linear(hidden_size)
        self.gen_net_relu_0 = layer.ReLU()
        self.gen_net_fc_1 = layer.Linear(feature_size)
        self.gen_net_sigmoid_1 = layer.Sigmoid()
        self.dis_net_fc_0 = layer.Linear(hidden_size)
        self.dis_net_relu_0 = layer.ReLU()
        self.dis_net_fc_1 = layer.Linear(1)
        self.dis_net_sigmoid_1 = layer.Sigmoid()
        self.binary_cross_entropy = layer.BinaryCrossEntropy()

    def forward(self, x):
        return self.forward_dis(self.forward_gen(x))

    def forward_dis(self, x):
        y = self.dis_net_relu_0(self.dis_net_fc_0(x))
        return self.dis_net_sigmoid_1(self.dis_net_fc_1(y))

    def forward_gen(self, x):
        y = self.gen_net_relu_0(self.gen_net_fc_0(x))
        return self.gen_net_sigmoid_1(self.gen_net_fc_1(y))

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = self.binary_cross_entropy(out, y)
        for p, g in autograd.backward(loss):
            if "gen_net" in p.name:
                self.optimizer.apply(p.name, p, g)
        return out, loss

    def train_one_batch_dis(self, x, y):
        out = self.forward_dis(x)
        loss = self.binary_cross_entropy(out, y)
        for p, g in autograd.backward(loss):
            if "dis_net" in p.name:
                self.optimizer.apply(p.name, p, g)
        self.optimizer(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('-i', '--iterations', default=40, type=int)
    args = parser.parse_args()
    dev = device.create_cuda_gpu_on(0)
    dev.SetRandSeed(0)
    np.random.seed(0)
    batch_size, noise_size, feature_size = 16, 8, 16
    # the real rows: two stripes of ones over zeros, plus a little noise
    stripes = np.zeros((2, feature_size), np.float32)
    stripes[0, ::2] = stripes[1, 1::2] = 1
    train_data = stripes[np.arange(256) % 2] + 0.05 * np.random.randn(256, feature_size)
    train_data = np.clip(train_data, 0, 1).astype(np.float32)

    net = GAN_MLP(noise_size, feature_size)
    net.set_optimizer(opt.Adam(lr=0.005))
    noise = tensor.Tensor((batch_size, noise_size), dev, tensor.float32)
    real_images = tensor.Tensor((batch_size, feature_size), dev, tensor.float32)
    real_labels = tensor.Tensor((batch_size, 1), dev, tensor.float32)
    fake_labels = tensor.Tensor((batch_size, 1), dev, tensor.float32)
    net.compile([noise], is_train=True, use_graph=False, sequential=True)
    real_labels.set_value(1.0)
    fake_labels.set_value(0.0)

    for iteration in range(args.iterations):
        idx = np.random.randint(0, train_data.shape[0], batch_size)
        real_images.copy_from_numpy(train_data[idx])
        net.train()
        _, d_loss_real = net.train_one_batch_dis(real_images, real_labels)
        noise.uniform(-1, 1)
        fake_images = net.forward_gen(noise)
        _, d_loss_fake = net.train_one_batch_dis(fake_images, fake_labels)
        d_loss = tensor.to_numpy(d_loss_real)[0] + tensor.to_numpy(d_loss_fake)[0]
        noise.uniform(-1, 1)
        _, g_loss = net.train_one_batch(noise, real_labels)
        print("step %d loss %f generator %f" % (iteration, d_loss, tensor.to_numpy(g_loss)[0]))

    net.eval()
    noise.uniform(-1, 1)
    real_images.copy_from_numpy(train_data[:batch_size])
    scores = np.concatenate([tensor.to_numpy(net.forward_dis(real_images)),
                             tensor.to_numpy(net.forward(noise))])
    truth = np.concatenate([np.ones(batch_size), np.zeros(batch_size)])
    print("eval_shape %s" % (scores.shape,))
    print("eval_accuracy %f" % ((scores[:, 0] > 0.5) == truth).mean())
