"""Train a character-level 2-layer LSTM language model on the Shakespeare text that ships with
autograd, report the validation loss and sample.

    python examples/train_lstm_lm.py                 # 2 x LSTM(256), 1,500 iterations
    python examples/train_lstm_lm.py --fast          # a tiny model for a few seconds (tests)

The same data, split, batches and loss as examples/train_gpt.py, with the library's LSTM layer
(time-major (T, N, E) sequences) in place of the transformer blocks.
"""
import sys
import time

import numpy as np

import autograd
from autograd import opt
from autograd.data import load_shakespeare, random_windows

from _language_model import argument_parser, estimate_loss
from autograd.layers.attention import apply_rows


class LSTMLanguageModel(autograd.Layer):
    """Embedding(vocabulary, embed) -> LSTM layers (hidden wide) -> Linear(hidden, vocabulary)."""

    def __init__(self, vocabulary, embed=64, hidden=256, layers=2):
        super().__init__()
        self.embedding = autograd.Embedding(vocabulary, embed)
        self.lstms = [autograd.LSTM(embed if i == 0 else hidden, hidden, return_sequences=True)
                      for i in range(layers)]
        self.head = autograd.Linear(hidden, vocabulary)

    def forward(self, ids):
        """ids (N, T) int -> logits (N, T, vocabulary)"""
        x = self.embedding(np.ascontiguousarray(ids.T))        # time-major (T, N, embed)
        for lstm in self.lstms:
            x, _ = lstm(x)
        logits = apply_rows(self.head, x)                      # (T, N, vocabulary)
        return autograd.transpose(logits, (1, 0, 2))


def parse_arguments(argv):
    parser = argument_parser(__doc__.split("\n")[0], iterations=1500, batch_size=32, lr=2e-3,
                             min_lr=2e-4, eval_batches=20, temperature=0.8)
    parser.add_argument("--embed", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args(argv)
    if args.fast:
        args.iterations, args.batch_size, args.context = 40, 8, 12
        args.embed, args.hidden, args.layers = 16, 32, 2
        args.eval_interval, args.eval_batches, args.sample_chars = 20, 3, 40
        args.lr = 1e-2
    return args


def sample(model, vocabulary, length, temperature, rng, start="\n"):
    """Generate by carrying the LSTM state forward one character at a time."""
    ids = list(vocabulary.encode(start))
    with autograd.no_grad():
        states = [None] * len(model.lstms)
        token = ids[-1]
        for _ in range(length):
            x = model.embedding(np.array([token]))                     # (1, embed)
            for i, lstm in enumerate(model.lstms):
                states[i] = lstm.cell(x, states[i])
                x = states[i][0]
            logits = model.head(x).to_numpy()[0].astype(np.float64) / max(temperature, 1e-8)
            p = np.exp(logits - logits.max())
            token = int(rng.choice(len(p), p=p / p.sum()))
            ids.append(token)
    return vocabulary.decode(ids[len(start):])


def main(argv=None):
    args = parse_arguments(argv)
    from tqdm import tqdm

    autograd.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    train_ids, vocabulary = load_shakespeare("train")
    val_ids, _ = load_shakespeare("val")
    model = LSTMLanguageModel(len(vocabulary), args.embed, args.hidden, args.layers)
    print(f"LSTM LM: {model.count_parameters() / 1e6:.2f} M parameters")
    schedule = opt.CosineDecay(args.lr, total_steps=args.iterations, final=args.min_lr)
    optimizer = opt.Adam(lr=schedule)
    history = {"iteration": [], "val": []}
    bar = tqdm(total=args.iterations, unit="it", disable=args.quiet, file=sys.stdout)
    start = time.perf_counter()
    losses = []
    for iteration in range(args.iterations + 1):
        if iteration % args.eval_interval == 0 or iteration == args.iterations:
            val_loss = estimate_loss(model, val_ids, args, rng, args.eval_batches)
            history["iteration"].append(iteration)
            history["val"].append(val_loss)
            bar.write(f"iter {iteration:5d}  val loss {val_loss:.4f}  "
                      f"({time.perf_counter() - start:.1f} s)")
        if iteration == args.iterations:
            break
        x, y = random_windows(train_ids, args.batch_size, args.context, rng)
        loss = autograd.token_cross_entropy(model(x), y)
        pairs, _ = opt.clip_grad_norm(autograd.backward(loss), args.clip)
        for param, grad in pairs:
            optimizer.update(param, grad)
        optimizer.step()
        losses.append(loss.item())
        bar.update(1)
        if iteration % 10 == 0:
            bar.set_postfix(loss=f"{np.mean(losses[-10:]):.3f}")
    bar.close()
    seconds = time.perf_counter() - start
    print(f"final val loss {history['val'][-1]:.4f} nats/char after {args.iterations} "
          f"iterations, {seconds:.1f} s")
    text = sample(model, vocabulary, args.sample_chars, args.temperature,
                  np.random.default_rng(args.seed))
    print("-" * 72 + "\n" + text + "\n" + "-" * 72)
    return {"val_loss": history["val"][-1], "seconds": seconds, "history": history,
            "train_losses": losses, "sample": text}


if __name__ == "__main__":
    main()
