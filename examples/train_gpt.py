"""Train a character-level GPT on the Shakespeare text that ships with autograd, then sample.

    python examples/train_gpt.py                    # nanoGPT's CPU configuration, 2,000 steps
    python examples/train_gpt.py --fast             # a tiny model for a few seconds (tests)
    python examples/train_gpt.py --temperature 0.8 --top-k 20 --sample-chars 1000
    python examples/train_gpt.py --graph            # graph mode (the same losses, bit for bit)

The configuration is nanoGPT's documented CPU run of shakespeare_char: 4 layers, 4 heads, width
128, context 64, batch 12, 2,000 iterations, AdamW (lr 1e-3, betas 0.9/0.99, weight decay 0.1
on the matrices) with 100 warm-up steps and a cosine decay to 1e-4, gradient clipping at 1.0,
no dropout; the token embedding is tied to the output projection. nanoGPT reports a validation
loss of about 1.88 nats per character for it. benchmarks/gpt_torch_reference.py is the same
model and loop in PyTorch.

With ``--graph`` the training step and the loss estimate run in graph mode
(``autograd.capture``, see docs/graph_mode.md): each is recorded on its first two calls and
replayed without the tape after that, which gives the eager run's losses and parameters bit
for bit. It is not the default: this model's step is GEMMs and elementwise passes, the tape's
bookkeeping is a few percent of it, and the recordings hold about 220 MB more
(benchmarks/NOTES.md).
"""
import sys
import time

import numpy as np

import autograd
from autograd import opt
from autograd.data import load_shakespeare, random_windows

from _language_model import argument_parser, estimate_loss


class GPT(autograd.Layer):
    """Token and position embeddings, ``layers`` pre-norm causal transformer blocks, a final
    LayerNorm and the output projection tied to the token table (logits = h @ wte^T)."""

    def __init__(self, vocabulary, context, width=128, layers=4, heads=4, dropout=0.0):
        super().__init__()
        self.context = context
        self.wte = autograd.Embedding(vocabulary, width)
        self.wte.W.gaussian(0.0, 0.02)
        self.wpe = autograd.PositionalEmbedding(context, width, std=0.02)
        self.blocks = [autograd.TransformerBlock(width, heads, dropout=dropout, causal=True)
                       for _ in range(layers)]
        self.ln_f = autograd.LayerNorm(width)
        for name, p in self.named_parameters():        # GPT-2's initialisation, as nanoGPT
            if name.endswith(".W") and "blocks" in name:
                # only the residual projections (attn.out_proj, the MLP's proj) are scaled
                # down; in_proj is not one ("attn.in_proj.W" also ends in "proj.W")
                residual = name.endswith((".out_proj.W", ".proj.W"))
                p.gaussian(0.0, 0.02 / np.sqrt(2 * layers) if residual else 0.02)
        self.dropout = dropout

    def forward(self, ids):
        """ids (N, T) int -> logits (N, T, vocabulary)"""
        x = self.wpe(self.wte(ids))
        x = autograd.dropout(x, self.dropout, training=self.is_training)
        for block in self.blocks:
            x = block(x)
        h = self.ln_f(x)
        n, t, width = h.shape
        logits = autograd.matmul(autograd.reshape(h, (n * t, width)),
                                 autograd.transpose(self.wte.W))
        return autograd.reshape(logits, (n, t, -1))


def parse_arguments(argv):
    parser = argument_parser(__doc__.split("\n")[0], iterations=2000, batch_size=12, lr=1e-3,
                             min_lr=1e-4, eval_batches=50, temperature=1.0)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--final-eval-batches", type=int, default=200,
                        help="batches for the final validation loss")
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--graph", action="store_true",
                        help="graph mode: capture the training step and the loss estimate, "
                             "then replay them without the tape; same results")
    parser.add_argument("--save", metavar="PATH", default="train_gpt.ckpt",
                        help="checkpoint written at the end ('' for none)")
    parser.add_argument("--plot", metavar="PNG", default="train_gpt_curves.png",
                        help="where to draw the loss curves ('' for none)")
    args = parser.parse_args(argv)
    if args.fast:
        args.iterations, args.batch_size, args.context = 60, 8, 16
        args.width, args.layers, args.heads = 32, 1, 2
        args.warmup, args.eval_interval, args.eval_batches = 10, 20, 4
        args.final_eval_batches, args.sample_chars = 8, 60
        args.lr = 3e-3
    return args


def make_optimizers(model, args, schedule):
    """AdamW with weight decay on the matrices (ndim >= 2), none on biases and norms (nanoGPT)."""
    decayed = opt.AdamW(lr=schedule, beta_1=0.9, beta_2=0.99, weight_decay=args.weight_decay)
    plain = opt.AdamW(lr=schedule, beta_1=0.9, beta_2=0.99, weight_decay=0.0)
    return decayed, plain


def sample(model, vocabulary, length, context, temperature=1.0, top_k=None, rng=None,
           start="\n"):
    """``length`` characters generated after ``start``, one at a time, from the softmax of the
    last position's logits / temperature (restricted to the top_k when given)."""
    rng = rng or np.random.default_rng(0)
    ids = list(vocabulary.encode(start))
    model.eval()
    with autograd.no_grad():
        for _ in range(length):
            window = np.array(ids[-context:], np.int64)[None]
            logits = model(window).to_numpy()[0, -1].astype(np.float64) / max(temperature,
                                                                                1e-8)
            if top_k is not None and top_k < len(logits):
                cutoff = np.sort(logits)[-top_k]
                logits = np.where(logits < cutoff, -np.inf, logits)
            p = np.exp(logits - logits.max())
            ids.append(int(rng.choice(len(p), p=p / p.sum())))
    model.train()
    return vocabulary.decode(ids[len(start):])


def main(argv=None):
    args = parse_arguments(argv)
    from tqdm import tqdm

    autograd.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    train_ids, vocabulary = load_shakespeare("train")
    val_ids, _ = load_shakespeare("val")
    model = GPT(len(vocabulary), args.context, args.width, args.layers, args.heads,
                args.dropout)
    print(f"GPT: {model.count_parameters() / 1e6:.2f} M parameters, vocabulary "
          f"{len(vocabulary)}, {args.iterations} iterations of batch {args.batch_size} x "
          f"{args.context}")
    schedule = opt.LinearWarmup(opt.CosineDecay(args.lr, total_steps=args.iterations,
                                                final=args.min_lr), warmup_steps=args.warmup)
    decayed, plain = make_optimizers(model, args, schedule)

    def train_step(x, y):
        """Forward, backward, clipping, the AdamW updates: one iteration, what graph mode
        captures and replays."""
        loss = autograd.token_cross_entropy(model(x), y)
        pairs, _ = opt.clip_grad_norm(autograd.backward(loss), args.clip)
        for param, grad in pairs:
            (decayed if param.ndim >= 2 else plain).update(param, grad)
        decayed.step()
        plain.step()
        return loss

    def loss_of(x, y):
        return autograd.token_cross_entropy(model(x), y)

    if args.graph:
        train_step, loss_of = autograd.capture(train_step), autograd.capture(loss_of)
    history = {"iteration": [], "train": [], "val": [], "step_loss": []}
    bar = tqdm(total=args.iterations, unit="it", disable=args.quiet, file=sys.stdout)
    start = time.perf_counter()
    eval_seconds = 0.0
    for iteration in range(args.iterations + 1):
        if iteration % args.eval_interval == 0 or iteration == args.iterations:
            eval_start = time.perf_counter()
            train_loss = estimate_loss(model, train_ids, args, rng, args.eval_batches, loss_of)
            val_loss = estimate_loss(model, val_ids, args, rng, args.eval_batches, loss_of)
            eval_seconds += time.perf_counter() - eval_start
            history["iteration"].append(iteration)
            history["train"].append(train_loss)
            history["val"].append(val_loss)
            bar.write(f"iter {iteration:5d}  train loss {train_loss:.4f}  val loss "
                      f"{val_loss:.4f}  ({time.perf_counter() - start:.1f} s)")
        if iteration == args.iterations:
            break
        x, y = random_windows(train_ids, args.batch_size, args.context, rng)
        loss = train_step(x, y)
        history["step_loss"].append(loss.item())
        bar.update(1)
        if iteration % 10 == 0:
            bar.set_postfix(loss=f"{np.mean(history['step_loss'][-10:]):.3f}",
                            lr=f"{decayed.lr_value:.2e}")
    bar.close()
    train_seconds = time.perf_counter() - start
    final_val = estimate_loss(model, val_ids, args, np.random.default_rng(0),
                              args.final_eval_batches, loss_of)
    print(f"final val loss {final_val:.4f} nats/char ({args.final_eval_batches} batches); "
          f"{train_seconds:.1f} s for {args.iterations} iterations, of which "
          f"{eval_seconds:.1f} s evaluating")
    if args.save:
        autograd.io.save(args.save, model=model, iteration=args.iterations,
                         val_loss=final_val, history=history)
        print(f"checkpoint written to {args.save}")
    if args.plot:
        plot_curves(history, args.plot)
        print(f"curves written to {args.plot}")
    text = sample(model, vocabulary, args.sample_chars, args.context, args.temperature,
                  args.top_k, np.random.default_rng(args.seed))
    print("-" * 72 + "\n" + text + "\n" + "-" * 72)
    replays = (train_step.replays, loss_of.replays) if args.graph else (0, 0)
    return {"val_loss": final_val, "seconds": train_seconds, "history": history,
            "sample": text, "replays": replays}


def plot_curves(history, path):
    import matplotlib
    matplotlib.use("Agg")                 # no display needed
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(6, 3.5))
    steps = np.arange(len(history["step_loss"]))
    axes.plot(steps, history["step_loss"], color="0.8", linewidth=0.5, label="batch loss")
    axes.plot(history["iteration"], history["train"], marker="o", label="train")
    axes.plot(history["iteration"], history["val"], marker="o", label="validation")
    axes.set(xlabel="iteration", ylabel="loss (nats/char)", title="char-level GPT")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


if __name__ == "__main__":
    main()
