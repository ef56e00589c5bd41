"""Data-parallel training in the style of SINGA's examples/cnn/train_mpi.py: wrap the SGD in
opt.DistOpt, then hand the ranks it reports to the single-process driver (train_model.run),
which partitions the synthetic set by rank and sums the loss and accuracy over the ranks.

    mpiexec -n 2 python -m autograd.singa --cpu train_mpi_model.py cnn -m 4

Rank 0 prints what train_model.py prints, for the whole world.
"""
from singa import singa_wrap as singa
from singa import opt
from singa import tensor
import argparse
import train_model

singa_dtype = {"float16": tensor.float16, "float32": tensor.float32}

if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='SINGA-style data-parallel training.')
    parser.add_argument('model', choices=sorted(train_model.IMAGES))
    parser.add_argument('-p', choices=['float32', 'float16'], default='float32',
                        dest='precision')
    parser.add_argument('-m', '--max-epoch', default=4, type=int, dest='max_epoch')
    parser.add_argument('-b', '--batch-size', default=8, type=int, dest='batch_size')
    parser.add_argument('-l', '--learning-rate', default=0.05, type=float, dest='lr')
    parser.add_argument('-d', '--dist-option', default='plain', dest='dist_option')
    parser.add_argument('-g', '--disable-graph', default='True', action='store_false',
                        dest='graph')
    args = parser.parse_args()

    sgd = opt.SGD(lr=args.lr, momentum=0.9, weight_decay=1e-5,
                  dtype=singa_dtype[args.precision])
    sgd = opt.DistOpt(sgd)
    train_model.run(sgd.global_rank, sgd.world_size, sgd.local_rank, args.max_epoch,
                    args.batch_size, args.model, sgd, args.graph, 0, args.dist_option, None,
                    args.precision)
