"""A driver in the style of SINGA's examples/cnn/train_cnn.py, on synthetic batches: one
input Tensor refilled with copy_from_numpy each batch, model(tx, ty, dist_option, spars) in
training mode, model(tx) in eval mode, the graph requested unless -g.

    python -m autograd.singa --cpu train_model.py cnn -m 4 -b 8

Prints ``epoch <i> loss <mean training loss>`` per epoch, then ``eval_shape <shape>`` and
``eval_accuracy <fraction>`` of the eval forward on the first training batch.
"""
from singa import singa_wrap as singa
from singa import device
from singa import tensor
from singa import opt
import numpy as np
import argparse

np_dtype = {"float16": np.float16, "float32": np.float32}
singa_dtype = {"float16": tensor.float16, "float32": tensor.float32}

IMAGES = {"cnn": (1, 12), "alexnet": (1, 16), "resnet": (3, 16), "xceptionnet": (3, 16),
          "mlp": (1, 12)}


def synthetic(num_channels, image_size, num, num_classes, rng):
    """Class templates plus noise: learnable in a few steps."""
    templates = rng.standard_normal((num_classes, num_channels, image_size, image_size))
    y = np.arange(num) % num_classes
    x = templates[y] + 0.5 * rng.standard_normal((num, num_channels, image_size, image_size))
    return x.astype(np.float32), y.astype(np.int32)


def partition(global_rank, world_size, train_x, train_y):
    """This rank's contiguous share of the training set."""
    per_rank = train_x.shape[0] // world_size
    start, end = global_rank * per_rank, (global_rank + 1) * per_rank
    return train_x[start:end], train_y[start:end]


def reduce_variable(variable, dist_opt, reducer):
    """The sum over the ranks of a NumPy value, through the optimizer's all_reduce."""
    reducer.copy_from_numpy(variable)
    dist_opt.all_reduce(reducer.data)
    dist_opt.wait()
    return tensor.to_numpy(reducer)


def run(global_rank, world_size, local_rank, max_epoch, batch_size, model, sgd, graph,
        verbosity, dist_option='plain', spars=None, precision='float32'):
    dev = device.create_cuda_gpu_on(local_rank)
    dev.SetRandSeed(0)
    np.random.seed(0)
    rng = np.random.default_rng(0)

    num_classes = 4
    num_channels, image_size = IMAGES[model]
    train_x, train_y = synthetic(num_channels, image_size, 2 * batch_size * world_size,
                                 num_classes, rng)
    data_size = np.prod(train_x.shape[1:train_x.ndim]).item()

    if model == 'resnet':
        from model import resnet
        model = resnet.resnet_small(num_channels=num_channels, num_classes=num_classes)
    elif model == 'xceptionnet':
        from model import xceptionnet
        model = xceptionnet.create_model(num_channels=num_channels, num_classes=num_classes)
    elif model == 'cnn':
        from model import cnn
        model = cnn.create_model(num_channels=num_channels, num_classes=num_classes)
    elif model == 'alexnet':
        from model import alexnet
        model = alexnet.create_model(num_channels=num_channels, num_classes=num_classes)
    elif model == 'mlp':
        from model import mlp
        model = mlp.create_model(data_size=data_size, num_classes=num_classes)

    # as train_cnn.py: a DistOpt (it has a communicator) trains on this rank's share
    DIST = hasattr(sgd, "communicator")
    if DIST:
        train_x, train_y = partition(global_rank, world_size, train_x, train_y)
        if global_rank == 0:
            print('world_size %d' % world_size)

    if model.dimension == 4:
        tx = tensor.Tensor((batch_size, num_channels, model.input_size, model.input_size),
                           dev, singa_dtype[precision])
    else:
        tx = tensor.Tensor((batch_size, data_size), dev, singa_dtype[precision])
    ty = tensor.Tensor((batch_size,), dev, tensor.int32)
    num_train_batch = train_x.shape[0] // batch_size
    idx = np.arange(train_x.shape[0], dtype=np.int32)

    model.set_optimizer(sgd)
    model.compile([tx], is_train=True, use_graph=graph, sequential=DIST)
    dev.SetVerbosity(verbosity)

    for epoch in range(max_epoch):
        np.random.shuffle(idx)
        train_loss = np.zeros(shape=[1], dtype=np.float32)
        model.train()
        for b in range(num_train_batch):
            x = train_x[idx[b * batch_size:(b + 1) * batch_size]]
            y = train_y[idx[b * batch_size:(b + 1) * batch_size]]
            tx.copy_from_numpy(x.astype(np_dtype[precision]))
            ty.copy_from_numpy(y)
            out, loss = model(tx, ty, dist_option, spars)
            train_loss += tensor.to_numpy(loss)[0]
        if DIST:
            reducer = tensor.Tensor((1,), dev, tensor.float32)
            train_loss = reduce_variable(train_loss, sgd, reducer) / world_size
        if global_rank == 0:
            print('epoch %d loss %f' % (epoch, train_loss[0] / num_train_batch), flush=True)

    model.eval()
    tx.copy_from_numpy(train_x[:batch_size])
    out_test = model(tx)
    correct = (np.argmax(tensor.to_numpy(out_test), axis=1) == train_y[:batch_size]).mean()
    if DIST:
        correct = reduce_variable(np.array([correct], np.float32), sgd, reducer)[0] / world_size
    if global_rank == 0:
        print('eval_shape %s' % (tuple(tensor.to_numpy(out_test).shape),))
        print('eval_accuracy %f' % correct)
    dev.PrintTimeProfiling()


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='SINGA-style training on synthetic data.')
    parser.add_argument('model', choices=sorted(IMAGES))
    parser.add_argument('-m', '--max-epoch', default=4, type=int, dest='max_epoch')
    parser.add_argument('-b', '--batch-size', default=8, type=int, dest='batch_size')
    parser.add_argument('-l', '--learning-rate', default=0.05, type=float, dest='lr')
    parser.add_argument('-g', '--disable-graph', default='True', action='store_false',
                        dest='graph')
    parser.add_argument('-v', '--log-verbosity', default=0, type=int, dest='verbosity')
    args = parser.parse_args()

    sgd = opt.SGD(lr=args.lr, momentum=0.9, weight_decay=1e-5, dtype=singa_dtype['float32'])
    run(0, 1, 0, args.max_epoch, args.batch_size, args.model, sgd, args.graph, args.verbosity)
