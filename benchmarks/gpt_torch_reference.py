"""The PyTorch reference for examples/train_gpt.py: the same character-level GPT, data split,
batches, initialisation, AdamW groups, warm-up + cosine schedule, clipping and evaluation,
written in plain PyTorch (eager), so the two runs can be compared side by side.

    python benchmarks/gpt_torch_reference.py               # 2,000 iterations, as train_gpt.py
    python benchmarks/gpt_torch_reference.py --fast        # seconds
    python benchmarks/gpt_torch_reference.py --threads 2   # torch.set_num_threads

Needs torch (the ``benchmarks`` extra). The batches come from the same NumPy generator and seed
as train_gpt.py, so both see the same windows in the same order.
"""
import argparse
import math
import os
import sys
import time

import numpy as np

if __package__ in (None, ""):
    # run as a script: sys.path[0] is benchmarks/, whose profile.py would shadow the standard
    # library's (torch imports cProfile); put the repository root there instead
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from autograd.data import load_shakespeare, random_windows      # noqa: E402  (data only)


def build_model(torch, vocabulary, context, width, layers, heads, approximate="none"):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(width)
            self.in_proj = nn.Linear(width, 3 * width)
            self.out_proj = nn.Linear(width, width)
            self.ln2 = nn.LayerNorm(width)
            self.fc = nn.Linear(width, 4 * width)
            self.proj = nn.Linear(4 * width, width)

        def forward(self, x):
            n, t, e = x.shape
            q, k, v = self.in_proj(self.ln1(x)).split(e, dim=2)
            q, k, v = (z.view(n, t, heads, e // heads).transpose(1, 2) for z in (q, k, v))
            y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.out_proj(y.transpose(1, 2).reshape(n, t, e))
            return x + self.proj(nn.functional.gelu(self.fc(self.ln2(x)),
                                                    approximate=approximate))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocabulary, width)
            self.wpe = nn.Embedding(context, width)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(width)
            for name, p in self.named_parameters():
                if name.endswith("bias"):
                    nn.init.zeros_(p)
                elif p.ndim == 2:
                    std = 0.02 / math.sqrt(2 * layers) if name.endswith(
                        ("out_proj.weight", ".proj.weight")) else 0.02
                    nn.init.normal_(p, 0.0, std)

        def forward(self, ids):
            t = ids.shape[1]
            x = self.wte(ids) + self.wpe.weight[:t]
            for block in self.blocks:
                x = block(x)
            return self.ln_f(x) @ self.wte.weight.T          # tied output projection

    return GPT()


def learning_rate(step, args):
    """train_gpt.py's schedule: LinearWarmup(CosineDecay(lr, iterations, min_lr), warmup)."""
    progress = min(step, args.iterations) / args.iterations
    cosine = args.min_lr + (args.lr - args.min_lr) * 0.5 * (1 + math.cos(math.pi * progress))
    return cosine * min(1.0, (step + 1) / args.warmup)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, value in (("iterations", 2000), ("batch-size", 12), ("context", 64),
                        ("width", 128), ("layers", 4), ("heads", 4), ("warmup", 100),
                        ("eval-interval", 250), ("eval-batches", 50),
                        ("final-eval-batches", 200), ("seed", 1337), ("threads", 0)):
        parser.add_argument(f"--{name}", type=int, default=value)
    for name, value in (("lr", 1e-3), ("min-lr", 1e-4), ("weight-decay", 0.1), ("clip", 1.0)):
        parser.add_argument(f"--{name}", type=float, default=value)
    parser.add_argument("--gelu", choices=["none", "tanh"], default="none")
    parser.add_argument("--fast", action="store_true")
    args = parser.parse_args(argv)
    if args.fast:
        args.iterations, args.batch_size, args.context = 60, 8, 16
        args.width, args.layers, args.heads = 32, 1, 2
        args.warmup, args.eval_interval, args.eval_batches = 10, 20, 4
        args.final_eval_batches, args.lr = 8, 3e-3
    return args


def main(argv=None):
    import torch
    args = parse_arguments(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    train_ids, vocabulary = load_shakespeare("train")
    val_ids, _ = load_shakespeare("val")
    model = build_model(torch, len(vocabulary), args.context, args.width, args.layers,
                        args.heads, args.gelu)
    decayed = [p for p in model.parameters() if p.ndim >= 2]
    plain = [p for p in model.parameters() if p.ndim < 2]
    optimizer = torch.optim.AdamW([{"params": decayed, "weight_decay": args.weight_decay},
                                   {"params": plain, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.99), eps=1e-8)
    loss_of = torch.nn.functional.cross_entropy

    def estimate(ids, generator, batches):
        model.eval()
        total = 0.0
        with torch.no_grad():
            for _ in range(batches):
                x, y = random_windows(ids, args.batch_size, args.context, generator)
                logits = model(torch.from_numpy(x))
                total += loss_of(logits.view(-1, logits.shape[-1]),
                                 torch.from_numpy(y).view(-1)).item()
        model.train()
        return total / batches

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; "
          f"{sum(p.numel() for p in model.parameters()) / 1e6:.2f} M parameters")
    start = time.perf_counter()
    eval_seconds = 0.0
    for iteration in range(args.iterations + 1):
        if iteration % args.eval_interval == 0 or iteration == args.iterations:
            eval_start = time.perf_counter()
            train_loss = estimate(train_ids, rng, args.eval_batches)
            val_loss = estimate(val_ids, rng, args.eval_batches)
            eval_seconds += time.perf_counter() - eval_start
            print(f"iter {iteration:5d}  train loss {train_loss:.4f}  val loss {val_loss:.4f}"
                  f"  ({time.perf_counter() - start:.1f} s)", flush=True)
        if iteration == args.iterations:
            break
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(iteration, args)
        x, y = random_windows(train_ids, args.batch_size, args.context, rng)
        logits = model(torch.from_numpy(x))
        loss = loss_of(logits.view(-1, logits.shape[-1]), torch.from_numpy(y).view(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
    seconds = time.perf_counter() - start
    final_val = estimate(val_ids, np.random.default_rng(0), args.final_eval_batches)
    print(f"final val loss {final_val:.4f} nats/char ({args.final_eval_batches} batches); "
          f"{seconds:.1f} s for {args.iterations} iterations, of which {eval_seconds:.1f} s "
          "evaluating")
    return {"val_loss": final_val, "seconds": seconds}


if __name__ == "__main__":
    main()
