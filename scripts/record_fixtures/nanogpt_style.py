"""A tiny character-level GPT trained on CPU, printing exactly the lines that
karpathy/nanoGPT's train.py / model.py print:

    tokens per iteration will be: 2,048
    number of parameters: 0.03M
    step 0: train loss 4.1953, val loss 4.1961
    iter 0: loss 4.1940, time 123.45ms, mfu -100.00%
    saving checkpoint to out

The model and loop are written from scratch here (not nanoGPT's code); only
the print formats follow nanoGPT.  The text corpus is the docstrings of a few
standard-library modules, so nothing is downloaded.

    python nanogpt_style.py            # writes ./data/stdlib_char/meta.pkl and ./out/ckpt.pt
"""
import argparse
import collections
import json
import math
import os
import pickle
import string
import textwrap
import time

import torch
from torch import nn
from torch.nn import functional as F


class Block(nn.Module):
    def __init__(self, d, heads, ctx):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        shape = (b, t, self.heads, d // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab, ctx, d, layers, heads):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads, ctx) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.cfg = dict(vocab=vocab, ctx=ctx, d=d, layers=layers, heads=heads)
        n_params = sum(p.numel() for p in self.parameters()) - self.pos.weight.numel()
        print("number of parameters: %.2fM" % (n_params / 1e6,))

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln(x))
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    def make_optimizer(self, lr, weight_decay):
        decay = [p for p in self.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.parameters() if p.dim() < 2]
        print(f"num decayed parameter tensors: {len(decay)}, with {sum(p.numel() for p in decay):,} parameters")
        print(f"num non-decayed parameter tensors: {len(no_decay)}, with {sum(p.numel() for p in no_decay):,} parameters")
        print("using fused AdamW: False")
        groups = [{"params": decay, "weight_decay": weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.99))

    def mfu(self, batch, dt, peak_flops=312e12):
        """Same idea as nanoGPT: 6N + 12*L*H*Q*T flops per token vs A100 bf16 peak."""
        c = self.cfg
        n = sum(p.numel() for p in self.parameters())
        per_token = 6 * n + 12 * c["layers"] * c["heads"] * (c["d"] // c["heads"]) * c["ctx"]
        return per_token * c["ctx"] * batch / dt / peak_flops


def corpus():
    mods = [collections, json, string, textwrap, argparse, os, pickle, math, time]
    return "\n".join(m.__doc__ or "" for m in mods)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-iters", type=int, default=250)
    ap.add_argument("--eval-interval", type=int, default=50)
    ap.add_argument("--log-interval", type=int, default=5)
    args = ap.parse_args()

    batch, ctx, grad_accum = 16, 64, 2
    out_dir, eval_iters, lr = "out", 20, 2e-3
    always_save_checkpoint = True  # nanoGPT's default
    torch.manual_seed(1337)
    text = corpus()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    split = int(0.9 * len(data))
    train_data, val_data = data[:split], data[split:]
    os.makedirs("data/stdlib_char", exist_ok=True)
    meta_path = os.path.join("data/stdlib_char", "meta.pkl")
    with open(meta_path, "wb") as f:
        pickle.dump({"vocab_size": len(chars), "stoi": stoi}, f)

    print(f"tokens per iteration will be: {grad_accum * batch * ctx:,}")
    os.makedirs(out_dir, exist_ok=True)
    print(f"found vocab_size = {len(chars)} (inside {meta_path})")
    print("Initializing a new model from scratch")
    model = TinyGPT(len(chars), ctx, d=64, layers=2, heads=4)
    opt = model.make_optimizer(lr, weight_decay=0.1)

    def get_batch(split_name):
        src = train_data if split_name == "train" else val_data
        ix = torch.randint(len(src) - ctx - 1, (batch,))
        x = torch.stack([src[i:i + ctx] for i in ix])
        y = torch.stack([src[i + 1:i + 1 + ctx] for i in ix])
        return x, y

    @torch.no_grad()
    def estimate_loss():
        model.eval()
        out = {}
        for name in ("train", "val"):
            out[name] = torch.tensor([model(*get_batch(name))[1].item() for _ in range(eval_iters)]).mean()
        model.train()
        return out

    best_val, running_mfu = 1e9, -1.0
    x, y = get_batch("train")
    t0 = time.time()
    it = local_it = 0
    while True:
        if it % args.eval_interval == 0:
            losses = estimate_loss()
            print(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            if losses["val"] < best_val or always_save_checkpoint:
                best_val = min(best_val, losses["val"].item())
                if it > 0:
                    print(f"saving checkpoint to {out_dir}")
                    torch.save({"model": model.state_dict(), "iter_num": it, "best_val_loss": best_val},
                               os.path.join(out_dir, "ckpt.pt"))
        for _ in range(grad_accum):
            _, loss = model(x, y)
            loss = loss / grad_accum
            x, y = get_batch("train")
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        t1 = time.time()
        dt, t0 = t1 - t0, t1
        if it % args.log_interval == 0:
            lossf = loss.item() * grad_accum
            if local_it >= 5:
                m = model.mfu(batch * grad_accum, dt)
                running_mfu = m if running_mfu == -1.0 else 0.9 * running_mfu + 0.1 * m
            print(f"iter {it}: loss {lossf:.4f}, time {dt * 1000:.2f}ms, mfu {running_mfu * 100:.2f}%")
        it += 1
        local_it += 1
        if it > args.max_iters:
            break


if __name__ == "__main__":
    main()
