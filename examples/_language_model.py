"""What the two Shakespeare language-model examples (train_gpt.py, train_lstm_lm.py) share: the
arguments they both take and the loss estimate they both print."""
import argparse

import autograd
from autograd.data import random_windows


def argument_parser(description, iterations, batch_size, lr, min_lr, eval_batches,
                    temperature):
    """A parser with the arguments both examples take; each adds its model's own."""
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--iterations", type=int, default=iterations)
    parser.add_argument("--batch-size", type=int, default=batch_size)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--lr", type=float, default=lr)
    parser.add_argument("--min-lr", type=float, default=min_lr)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--eval-interval", type=int, default=250)
    parser.add_argument("--eval-batches", type=int, default=eval_batches,
                        help="batches per loss estimate during training")
    parser.add_argument("--sample-chars", type=int, default=500)
    parser.add_argument("--temperature", type=float, default=temperature)
    parser.add_argument("--seed", type=int, default=1337)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--fast", action="store_true",
                        help="a tiny model and run, seconds long (for the test suite)")
    return parser


def estimate_loss(model, ids, args, rng, batches, loss_of=None):
    """The mean loss over ``batches`` random windows, in eval mode and without recording;
    ``loss_of(x, y)`` gives a batch's loss Tensor (default: the token cross entropy of
    ``model(x)``; a captured function replays it in graph mode)."""
    model.eval()
    total = 0.0
    with autograd.no_grad():
        for _ in range(batches):
            x, y = random_windows(ids, args.batch_size, args.context, rng)
            loss = (loss_of(x, y) if loss_of is not None
                    else autograd.token_cross_entropy(model(x), y))
            total += loss.item()
    model.train()
    return total / batches
