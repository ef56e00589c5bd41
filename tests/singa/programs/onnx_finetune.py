"""Fine-tuning an ONNX model in the style of SINGA's examples/onnx programs: a
sonnx.SONNXModel subclass cut at model_config's last_layers with a new layer.Linear head,
trained through train_one_batch(x, y, dist_option, spars) ('fp32': backward_and_update), a
tensor.PlaceHolder compiled with the graph asked for, and the inference path of resnet18.py
(sonnx.prepare(onnx_model).run([x]), tensor.softmax on the scores). The model zoo is the
local stand-in onnx_zoo.py.

    python -m autograd.singa --cpu onnx_finetune.py -m 6

Prints ``epoch <i> loss <mean loss>``, ``eval_shape``, ``eval_accuracy``,
``to_onnx_matches <bool>`` (the fine-tuned model, exported from its eval forward with
sonnx.to_onnx and saved, agrees with the model on the next batch) and ``prepare_matches <bool>``
(prepare().run agrees with the compiled model's forward on the uncut graph).
"""
from singa import device
from singa import tensor
from singa import autograd
from singa import layer
from singa import opt
from singa import sonnx
import onnx
import numpy as np
import argparse
import os
import tempfile

from onnx_zoo import download_model


class MyModel(sonnx.SONNXModel):

    def __init__(self, onnx_model, num_classes=4, last_layers=-1, in_dim=10):
        super(MyModel, self).__init__(onnx_model)
        self.last_layers = last_layers
        self.linear = layer.Linear(in_dim, num_classes)

    def forward(self, *x):
        y = super(MyModel, self).forward(*x, last_layers=self.last_layers)[0]
        return self.linear(y)

    def train_one_batch(self, x, y, dist_option, spars):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        if dist_option == 'fp32':
            self.optimizer.backward_and_update(loss)
        elif dist_option == 'fp16':
            self.optimizer.backward_and_update_half(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


class Scores(sonnx.SONNXModel):
    """resnet18.py's MyModel: the whole graph, its first output."""

    def forward(self, *x):
        return super(Scores, self).forward(*x)[0]

    def train_one_batch(self, x, y):
        pass


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-m', '--max-epoch', default=6, type=int, dest='max_epoch')
    parser.add_argument('-b', '--batch-size', default=8, type=int, dest='batch_size')
    args = parser.parse_args()
    batch_size, num_classes, image_size = args.batch_size, 4, 12

    dev = device.create_cuda_gpu_on(0)
    dev.SetRandSeed(0)
    rng = np.random.default_rng(0)
    templates = rng.standard_normal((num_classes, 1, image_size, image_size))
    train_y = (np.arange(4 * batch_size) % num_classes).astype(np.int32)
    train_x = (templates[train_y] + 0.5 * rng.standard_normal(
        (4 * batch_size, 1, image_size, image_size))).astype(np.float32)

    folder = tempfile.mkdtemp()
    model_config = download_model(folder, image_size)
    onnx_model = onnx.load(model_config['path'])
    model = MyModel(onnx_model, num_classes=num_classes,
                    last_layers=model_config['last_layers'],
                    in_dim=model_config['last_layers_dim'])

    tx = tensor.Tensor((batch_size, 1, image_size, image_size), dev, tensor.float32)
    ty = tensor.Tensor((batch_size,), dev, tensor.int32)
    model.set_optimizer(opt.SGD(lr=0.05, momentum=0.9))
    model.compile([tx], is_train=True, use_graph=True, sequential=False)
    num_train_batch = train_x.shape[0] // batch_size
    for epoch in range(args.max_epoch):
        model.train()
        train_loss = 0.0
        for b in range(num_train_batch):
            tx.copy_from_numpy(train_x[b * batch_size:(b + 1) * batch_size])
            ty.copy_from_numpy(train_y[b * batch_size:(b + 1) * batch_size])
            out, loss = model(tx, ty, 'fp32', None)
            train_loss += tensor.to_numpy(loss)[0]
        print('epoch %d loss %f' % (epoch, train_loss / num_train_batch), flush=True)

    model.eval()
    tx.copy_from_numpy(train_x[:batch_size])
    out_test = model(tx)
    print('eval_shape %s' % (tuple(tensor.to_numpy(out_test).shape),))
    correct = np.argmax(tensor.to_numpy(out_test), axis=1) == train_y[:batch_size]
    print('eval_accuracy %f' % correct.mean())

    # save the fine-tuned model as SINGA's docs do: export the forward that just ran, then
    # run the saved file on the next batch
    path = os.path.join(folder, 'finetuned.onnx')
    sonnx.save(sonnx.to_onnx([tx], [out_test]), path)
    exported = sonnx.prepare(sonnx.load(path), device=dev)
    tx.copy_from_numpy(train_x[batch_size:2 * batch_size])
    print('to_onnx_matches %s' % np.allclose(tensor.to_numpy(exported.run([tx])[0]),
                                             tensor.to_numpy(model(tx)), atol=1e-5))

    # inference on the whole downloaded graph, as resnet18.py runs it
    x = tensor.PlaceHolder((1, 1, image_size, image_size), device=dev)
    scores_model = Scores(onnx_model)
    scores_model.compile([x], is_train=False, use_graph=True, sequential=True)
    img = train_x[:1]
    y = tensor.softmax(scores_model.forward(tensor.Tensor(device=dev, data=img)))
    sg_ir = sonnx.prepare(onnx_model, device=dev)
    reference = tensor.softmax(sg_ir.run([img])[0])
    print('prepare_matches %s' % np.allclose(tensor.to_numpy(y), tensor.to_numpy(reference),
                                             atol=1e-6))
