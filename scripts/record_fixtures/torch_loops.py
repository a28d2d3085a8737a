"""Plain PyTorch training loops, one per scenario, printing the way
hand-written training scripts usually print.

    python torch_loops.py --scenario epoch_step
    python torch_loops.py --scenario spike
    python torch_loops.py --scenario spike_unrecovered
    python torch_loops.py --scenario divergence
    python torch_loops.py --scenario user_exception
    python torch_loops.py --scenario cpu_oom
    python torch_loops.py --scenario cuda_oom_injected
    python torch_loops.py --scenario jsonl
    python torch_loops.py --scenario tqdm

Every number printed comes from real forward/backward passes on synthetic
data.  Only `cuda_oom_injected` raises an exception by hand (there is no GPU
here); see its docstring.
"""
import argparse
import json
import math
import time

import torch
from torch import nn


def blobs(n, dim, classes, seed, spread=2.0):
    """Gaussian blobs: a learnable classification problem."""
    gen = torch.Generator().manual_seed(seed)
    centers = spread * torch.randn(classes, dim, generator=gen)
    y = torch.randint(0, classes, (n,), generator=gen)
    x = centers[y] + 1.5 * torch.randn(n, dim, generator=gen)
    return x, y


def batches(x, y, batch_size, gen):
    order = torch.randperm(len(x), generator=gen)
    for i in range(0, len(x), batch_size):
        idx = order[i:i + batch_size]
        yield x[idx], y[idx]


def grad_norm(model):
    total = 0.0
    for p in model.parameters():
        if p.grad is not None:
            total += float(p.grad.pow(2).sum())
    return math.sqrt(total)


# ---------------------------------------------------------------------------
def epoch_step():
    """The classic tutorial format: Epoch [e/E], Step [s/S], Loss: x."""
    torch.manual_seed(0)
    x, y = blobs(60000, 784, 10, seed=1, spread=0.1)
    xt, yt = blobs(10000, 784, 10, seed=1, spread=0.1)  # same centers (same seed)
    model = nn.Sequential(nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    num_epochs, batch_size = 3, 100
    total_step = len(x) // batch_size
    gen = torch.Generator().manual_seed(2)
    for epoch in range(num_epochs):
        for i, (xb, yb) in enumerate(batches(x, y, batch_size, gen)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if (i + 1) % 100 == 0:
                print("Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}"
                      .format(epoch + 1, num_epochs, i + 1, total_step, loss.item()))
    with torch.no_grad():
        acc = (model(xt).argmax(1) == yt).float().mean().item()
    print("Accuracy of the network on the 10000 test images: {} %".format(100 * acc))
    torch.save(model.state_dict(), "model.ckpt")
    print("Training finished")


# ---------------------------------------------------------------------------
def _regression_problem(seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(4096, 32, generator=gen)
    w = torch.randn(32, 1, generator=gen)
    y = torch.tanh(x @ w) + 0.05 * torch.randn(4096, 1, generator=gen)
    return x, y


def spike(mult=100):
    """`step N | loss X | lr Y` lines; the lr is multiplied by `mult` for
    steps 41-45 (a bad manual schedule), then restored.  Whatever the loss
    does afterwards is what the optimizer really did (x100 recovers within
    ~35 steps, x300 is still well above the pre-spike level at step 160)."""
    torch.manual_seed(0)
    x, y = _regression_problem(3)
    model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 1))
    base_lr = 1e-3
    opt = torch.optim.Adam(model.parameters(), lr=base_lr)
    gen = torch.Generator().manual_seed(4)
    total_steps = 160
    print(f"training for {total_steps} steps, base lr {base_lr:g}", flush=True)
    for step in range(1, total_steps + 1):
        lr = base_lr * (mult if 41 <= step <= 45 else 1)
        for g in opt.param_groups:
            g["lr"] = lr
        idx = torch.randint(0, len(x), (128,), generator=gen)
        loss = nn.functional.mse_loss(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} | loss {loss.item():.4f} | lr {lr:.1e}", flush=True)
    print("done", flush=True)


def divergence():
    """key=value lines.  Plain SGD with a learning rate a little above the
    stability limit 2/lambda_max of a least-squares problem, so the loss grows
    by a roughly constant factor every step (real dynamics, no injection)."""
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(512, 16, generator=gen) * torch.linspace(0.2, 1.0, 16)
    y = x @ torch.randn(16, 1, generator=gen)
    model = nn.Linear(16, 1)
    hessian = 2 * torch.cat([x, torch.ones(len(x), 1)], 1).T @ torch.cat([x, torch.ones(len(x), 1)], 1) / len(x)
    lam_max = torch.linalg.eigvalsh(hessian).max().item()
    lr = 2.04 / lam_max
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for step in range(1, 81):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        gn = grad_norm(model)
        opt.step()
        if step % 2 == 0:
            print(f"step={step} loss={loss.item():.6f} lr={lr:.4f} grad_norm={gn:.4f}", flush=True)
    print("finished 80 steps", flush=True)


# ---------------------------------------------------------------------------
def user_exception():
    """Runs one good epoch, then the validation pipeline (written separately,
    with an extra feature column) feeds a 17-wide batch into a 16-wide Linear:
    a genuine `mat1 and mat2 shapes cannot be multiplied` RuntimeError."""
    torch.manual_seed(0)
    x, y = blobs(2048, 16, 4, seed=6)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(7)

    def build_val_features(n):
        xv, _ = blobs(n, 16, 4, seed=8)
        bias_col = torch.ones(n, 1)  # "add a bias feature" -- only done here
        return torch.cat([xv, bias_col], dim=1)

    step = 0
    for epoch in range(1, 3):
        for xb, yb in batches(x, y, 64, gen):
            step += 1
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 8 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
        print(f"epoch {epoch} finished, running validation", flush=True)
        with torch.no_grad():
            val_logits = model(build_val_features(256))
        print(f"val logits mean {val_logits.mean():.4f}")


def cpu_oom():
    """At step 30 the script tries to preallocate a feature buffer whose size
    was computed from the wrong variable (10**6 rows per sample instead of 1).
    The allocation genuinely fails inside torch's CPU allocator."""
    torch.manual_seed(0)
    x, y = blobs(4096, 64, 8, seed=9)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 8))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(10)
    rows_per_sample = 10**6  # bug: should be 1
    for step in range(1, 61):
        idx = torch.randint(0, len(x), (64,), generator=gen)
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}/60 loss {loss.item():.4f}", flush=True)
        if step == 30:
            print("caching hidden features for analysis...", flush=True)
            feats = torch.empty(len(x) * rows_per_sample, 128 * 1024)
            feats[:64] = 0


def cuda_oom_injected():
    """INJECTED: there is no GPU on the recording machine.  At step 25 this
    raises torch.OutOfMemoryError by hand, with a message built in the format
    of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp,
    the TORCH_CHECK_WITH(OutOfMemoryError, ...) in DeviceCachingAllocator::malloc
    plus reportProcessMemoryInfo).  The loss lines before it are real."""
    torch.manual_seed(0)
    x, y = blobs(4096, 64, 8, seed=11)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 8))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(12)

    def forward_with_activation_cache(xb, step):
        if step == 25:  # pretend the batch got longer and blew past the card
            raise torch.OutOfMemoryError(
                "CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity "
                "of 79.25 GiB of which 1.31 GiB is free. Including non-PyTorch memory, this "
                "process has 77.93 GiB memory in use. Of the allocated memory 74.12 GiB is "
                "allocated by PyTorch, and 2.96 GiB is reserved by PyTorch but unallocated. "
                "If reserved but unallocated memory is large try setting "
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
                "See documentation for Memory Management  "
                "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
        return model(xb)

    for step in range(1, 51):
        idx = torch.randint(0, len(x), (64,), generator=gen)
        loss = nn.functional.cross_entropy(forward_with_activation_cache(x[idx], step), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}/50 loss {loss.item():.4f}", flush=True)


# ---------------------------------------------------------------------------
def jsonl():
    """One JSON object per line with nested dicts, then eval objects."""
    torch.manual_seed(0)
    x, y = blobs(4096, 32, 5, seed=13, spread=0.4)
    xv, yv = blobs(512, 32, 5, seed=13, spread=0.4)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 5))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=60)
    gen = torch.Generator().manual_seed(14)
    t0 = time.time()
    for step in range(1, 61):
        idx = torch.randint(0, len(x), (128,), generator=gen)
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        gn = grad_norm(model)
        opt.step()
        lr = sched.get_last_lr()[0]
        sched.step()
        rec = {"step": step,
               "train": {"loss": round(loss.item(), 5), "lr": lr, "grad_norm": round(gn, 4)},
               "time": round(time.time() - t0, 4)}
        print(json.dumps(rec), flush=True)
        if step % 20 == 0:
            with torch.no_grad():
                logits = model(xv)
                vloss = nn.functional.cross_entropy(logits, yv).item()
                acc = (logits.argmax(1) == yv).float().mean().item()
            print(json.dumps({"step": step, "eval": {"loss": round(vloss, 5), "accuracy": round(acc, 4)},
                              "time": round(time.time() - t0, 4)}), flush=True)
    print(json.dumps({"event": "train_end", "step": 60, "time": round(time.time() - t0, 4)}), flush=True)


def tqdm_loop():
    """A tqdm bar per epoch with set_postfix(loss=...), tqdm.write summaries."""
    from tqdm import tqdm

    torch.manual_seed(0)
    x, y = blobs(8192, 256, 10, seed=15, spread=0.12)
    model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    gen = torch.Generator().manual_seed(16)
    for epoch in range(1, 4):
        bar = tqdm(list(batches(x, y, 128, gen)), desc=f"epoch {epoch}")
        total = 0.0
        for xb, yb in bar:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            bar.set_postfix(loss=loss.item())
        tqdm.write(f"epoch {epoch}: mean loss {total / len(bar):.4f}")
    print("all epochs done")


SCENARIOS = {
    "epoch_step": epoch_step,
    "spike": spike,
    "spike_unrecovered": lambda: spike(mult=300),
    "divergence": divergence,
    "user_exception": user_exception,
    "cpu_oom": cpu_oom,
    "cuda_oom_injected": cuda_oom_injected,
    "jsonl": jsonl,
    "tqdm": tqdm_loop,
}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", choices=sorted(SCENARIOS), required=True)
    SCENARIOS[ap.parse_args().scenario]()
