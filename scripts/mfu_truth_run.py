"""A small GPT trained for real (on the CPU, or a GPU when there is one) that prints
nanoGPT-style lines with an MFU computed inside the process from FLOPs *measured* by
PyTorch's FlopCounterMode — the truth babysit's estimate from the log is checked against.

    python scripts/mfu_truth_run.py --peak-tflops 1.0 > mfu_truth.log
    babysit mfu_truth.log --once --peak-tflops 1.0 --gpus 1 --layers 4 --width 256 --seq-len 128

Needs torch (not a babysit dependency). Each `iter` line covers the iterations since the
previous line: `time` is their mean duration and `mfu` the ratio of totals over them
(measured FLOPs / elapsed time / peak).
The last line gives the same ratio over every iteration — what babysit's estimate over
its window of the last 20 lines should match when the run logs 20 lines (--iters 100,
--log-every 5).
"""

from __future__ import annotations

import argparse
import math
import time

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.flop_counter import FlopCounterMode


class Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)
        self.heads = heads

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        # Explicit attention (not the fused kernel) so every FLOP is counted as a matmul.
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        attended = scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v
        x = x + self.proj(attended.transpose(1, 2).reshape(b, t, c))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class TinyGpt(nn.Module):
    def __init__(self, vocab: int, width: int, layers: int, heads: int, seq_len: int) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(seq_len, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.tokens.weight  # tied, as in GPT-2

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tokens(idx) + self.positions(torch.arange(idx.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))

    def params_without_positions(self) -> int:
        return sum(p.numel() for p in self.parameters()) - self.positions.weight.numel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--peak-tflops", type=float, default=1.0)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--log-every", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = TinyGpt(args.vocab, args.width, args.layers, 4, args.seq_len)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    tokens_per_iter = args.batch * args.seq_len
    print(f"tokens per iteration will be: {tokens_per_iter:,}", flush=True)
    print(f"number of parameters: {model.params_without_positions() / 1e6:.4f}M", flush=True)
    data = torch.randint(0, args.vocab, (args.batch, args.seq_len + 1))

    def step() -> float:
        logits = model(data[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, args.vocab), data[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return float(loss)

    counter = FlopCounterMode(display=False)
    with counter:
        step()  # one step measured: the model's FLOPs per iteration (forward + backward)
    flops_per_iter = counter.get_total_flops()
    peak = args.peak_tflops * 1e12
    flops_done, seconds, all_seconds = 0.0, 0.0, 0.0
    for it in range(1, args.iters + 1):
        start = time.perf_counter()
        loss = step()
        dt = time.perf_counter() - start
        flops_done += flops_per_iter
        seconds += dt
        all_seconds += dt
        if it % args.log_every == 0:
            mean_ms = 1000 * seconds / args.log_every
            print(f"iter {it}: loss {loss:.4f}, time {mean_ms:.2f}ms, "
                  f"mfu {100 * flops_done / seconds / peak:.4f}%", flush=True)
            flops_done, seconds = 0.0, 0.0
    print(f"measured FLOPs per iteration: {flops_per_iter:.6g}", flush=True)
    overall = flops_per_iter * args.iters / all_seconds / peak
    print(f"mfu over all {args.iters} iterations (measured FLOPs): {100 * overall:.4f}%",
          flush=True)


if __name__ == "__main__":
    main()
