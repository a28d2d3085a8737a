"""FORMAT REPLAY -- not a real Megatron-LM or torchtitan run.

Megatron-LM and torchtitan cannot run on this CPU-only machine, so this
script trains a real tiny next-token model and prints its (real) numbers in
the line shapes those frameworks use.  The shapes were read from their
sources:

  megatron   megatron/training/training.py  training_log() / print_datetime()
             evaluate_and_print_results(); megatron/training/checkpointing.py
             save_checkpoint(); megatron/training/arguments.py _print_args()
  torchtitan torchtitan/components/metrics.py MetricsProcessor.log() and
             log_validation(); torchtitan/tools/logging.py init_logger();
             torchtitan/tools/utils.py Color / GarbageCollection;
             torchtitan/components/checkpoint.py save(); torchtitan/train.py

Usage:
    python format_replay.py --style megatron --save-dir /tmp/megatron_ckpt
    torchrun --nproc_per_node 2 --local-ranks-filter 0 --role rank --tee 3 \\
        format_replay.py --style torchtitan --save-dir /tmp/titan_ckpt

For torchtitan the command above is how torchtitan's run_train.sh launches
training, so the "[rank0]:" prefixes are added by the real torchrun.  The
"memory" field is this process's peak RSS (there is no GPU), and mfu is
computed against the A100 bf16 peak that torchtitan falls back to.
"""
import argparse
import gc
import logging
import math
import os
import resource
import time
from datetime import datetime

import torch
import torch.distributed as dist
from torch import nn

VOCAB, SEQ = 256, 64


class TinyLM(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, d)
        self.mix = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.out = nn.Linear(d, VOCAB)

    def forward(self, idx):
        h = self.emb(idx)
        return self.out(h + self.mix(h))


def counting_batch(batch, gen):
    start = torch.randint(0, VOCAB, (batch, 1), generator=gen)
    stride = torch.randint(1, 4, (batch, 1), generator=gen)
    seq = (start + stride * torch.arange(SEQ + 1)) % VOCAB
    return seq[:, :-1], seq[:, 1:]


def lm_loss(model, x, y):
    return nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))


def grad_norm(model):
    return math.sqrt(sum(float(p.grad.pow(2).sum()) for p in model.parameters() if p.grad is not None))


# ---------------------------------------------------------------------------
def megatron(save_dir):
    def now():
        return datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")

    train_iters, log_interval, eval_interval, save_interval = 100, 10, 50, 50
    gbs, mbs, lr_max, lr_min, warmup = 8, 8, 3e-3, 3e-4, 10
    args = {"train_iters": train_iters, "log_interval": log_interval, "eval_interval": eval_interval,
            "save_interval": save_interval, "global_batch_size": gbs, "micro_batch_size": mbs,
            "lr": lr_max, "min_lr": lr_min, "lr_warmup_iters": warmup, "lr_decay_style": "cosine",
            "seq_length": SEQ, "padded_vocab_size": VOCAB, "bf16": False, "ckpt_format": "torch_dist",
            "save": save_dir, "world_size": 1, "clip_grad": 1.0, "eval_iters": 5}
    print("------------------------ arguments ------------------------", flush=True)
    for line in sorted(("  {} {} {}".format(k, "." * (48 - len(k)), v) for k, v in args.items()),
                       key=str.lower):
        print(line, flush=True)
    print("-------------------- end of arguments ---------------------", flush=True)

    torch.manual_seed(1234)
    gen = torch.Generator().manual_seed(1)
    model = TinyLM()
    opt = torch.optim.AdamW(model.parameters(), lr=lr_max)
    print(f"[before the start of training step] datetime: {now()} ", flush=True)

    def lr_at(it):
        if it <= warmup:
            return lr_max * it / warmup
        frac = (it - warmup) / (train_iters - warmup)
        return lr_min + 0.5 * (lr_max - lr_min) * (1 + math.cos(math.pi * frac))

    def evaluate(prefix):
        with torch.no_grad():
            vals = [lm_loss(model, *counting_batch(gbs, gen)).item() for _ in range(args["eval_iters"])]
        value = sum(vals) / len(vals)
        string = f" validation loss at {prefix} | "
        string += "{} value: {:.6E} | ".format("lm loss", value)
        string += "{} PPL: {:.6E} | ".format("lm loss", math.exp(min(20, value)))
        print("-" * (len(string) + 1), flush=True)
        print(string, flush=True)
        print("-" * (len(string) + 1), flush=True)

    def save(it):
        print("saving checkpoint at iteration {:7d} to {} in {} format".format(it, save_dir, "torch_dist"),
              flush=True)
        os.makedirs(save_dir, exist_ok=True)
        torch.save(model.state_dict(), os.path.join(save_dir, f"iter_{it:07d}.pt"))
        print("  successfully saved checkpoint from iteration {:7d} to {}".format(it, save_dir),
              flush=True)

    loss_sum, n, t0 = 0.0, 0, time.time()
    for it in range(1, train_iters + 1):
        lr = lr_at(it)
        for g in opt.param_groups:
            g["lr"] = lr
        loss = lm_loss(model, *counting_batch(gbs, gen))
        opt.zero_grad()
        loss.backward()
        gn = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        opt.step()
        loss_sum, n = loss_sum + loss.item(), n + 1
        if it % log_interval == 0:
            elapsed = (time.time() - t0) / n
            s = f" [{now()}]"
            s += " iteration {:8d}/{:8d} |".format(it, train_iters)
            s += " consumed samples: {:12d} |".format(it * gbs)
            s += " elapsed time per iteration (ms): {:.1f} |".format(elapsed * 1000.0)
            s += f" learning rate: {lr:.6E} |"
            s += f" global batch size: {gbs:5d} |"
            s += " {}: {:.6E} |".format("lm loss", loss_sum / n)
            s += f" loss scale: {1.0:.1f} |"
            s += f" grad norm: {gn:.3f} |"
            s += " number of skipped iterations: {:3d} |".format(0)
            s += " number of nan iterations: {:3d} |".format(0)
            print(s, flush=True)
            loss_sum, n, t0 = 0.0, 0, time.time()
        if it % eval_interval == 0:
            evaluate(f"iteration {it}")
        if it % save_interval == 0:
            save(it)
    print(f"[after training is done] datetime: {now()} ", flush=True)
    evaluate(f"iteration {train_iters} on validation set")
    evaluate(f"iteration {train_iters} on test set")


# ---------------------------------------------------------------------------
class Color:
    red, green, yellow, blue = "\033[31m", "\033[32m", "\033[33m", "\033[34m"
    magenta, cyan, reset = "\033[35m", "\033[36m", "\033[39m"
    orange, turquoise = "\033[38;2;180;60;0m", "\033[38;2;54;234;195m"


def torchtitan(save_dir):
    logger = logging.getLogger()
    logger.setLevel(logging.INFO)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s"))
    logger.addHandler(handler)

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    logger.info("Starting job: tiny CPU format replay")
    begin = time.monotonic()
    gc.collect(1)
    logger.info("[GC] %s took %.2f seconds", "Initial GC collection", time.monotonic() - begin)

    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(TinyLM())
    n_params = sum(p.numel() for p in model.parameters())
    logger.info(f"Model tinylm debug size: {n_params:,} total parameters")
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    gen = torch.Generator().manual_seed(10 + rank)
    steps, log_freq, val_freq, ckpt_freq, local_bs = 30, 5, 10, 20, 8
    flops_per_token = 6 * n_params
    peak_flops = 312e12  # torchtitan's fallback for unknown devices (A100 bf16)
    total_mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3
    c = Color
    logger.info("Training starts at step 1")

    ntokens, t_last = 0, time.perf_counter()
    for step in range(1, steps + 1):
        x, y = counting_batch(local_bs, gen)
        loss = lm_loss(model, x, y)
        opt.zero_grad()
        loss.backward()
        gn = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        opt.step()
        ntokens += x.numel()
        if step == 1 or step % log_freq == 0:
            avg, mx = loss.detach().clone(), loss.detach().clone()
            dist.all_reduce(avg)
            dist.all_reduce(mx, op=dist.ReduceOp.MAX)
            avg = avg.item() / world
            dt = time.perf_counter() - t_last
            tps = ntokens / dt
            tflops = flops_per_token * tps / 1e12
            mfu = 100 * flops_per_token * tps / peak_flops
            mem_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
            logger.info(
                f"{c.red}step: {step:2}  "
                f"{c.green}loss: {avg:8.5f}  "
                f"{c.orange}grad_norm: {gn:7.4f}  "
                f"{c.turquoise}memory: {mem_gib:5.2f}GiB({100 * mem_gib / total_mem_gib:.2f}%)  "
                f"{c.blue}tps: {round(tps):,}  "
                f"{c.cyan}tflops: {tflops:,.2f}  "
                f"{c.magenta}mfu: {mfu:.2f}%{c.reset}")
            ntokens, t_last = 0, time.perf_counter()
        if step % val_freq == 0:
            v_start = time.perf_counter()
            with torch.no_grad():
                vloss = sum(lm_loss(model, *counting_batch(local_bs, gen)).item() for _ in range(4)) / 4
            v_tps = 4 * local_bs * SEQ / (time.perf_counter() - v_start)
            mem_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
            logger.info(
                f"{c.yellow}validate step: {step:2}  "
                f"{c.green}loss: {vloss:7.4f}  "
                f"{c.turquoise}memory: {mem_gib:5.2f}GiB({100 * mem_gib / total_mem_gib:.2f}%)  "
                f"{c.blue}tps: {round(v_tps):,}{c.reset}")
        if step % ckpt_freq == 0:
            begin = time.monotonic()
            logger.info("Saving the checkpoint (or staging if async is enabled).")
            if rank == 0:
                os.makedirs(save_dir, exist_ok=True)
                torch.save(model.state_dict(), os.path.join(save_dir, f"step-{step}.pt"))
            gc_begin = time.monotonic()
            gc.collect(1)
            logger.info("[GC] %s took %.2f seconds", "GC collection invoked by checkpointer.",
                        time.monotonic() - gc_begin)
            logger.info("Finished saving the checkpoint (or staging if async is enabled)"
                        f"in {time.monotonic() - begin:.2f} seconds.")
    if rank == 0:
        logger.info("Sleeping 2 seconds for other ranks to complete")
        time.sleep(2)
    dist.barrier()
    logger.info("Training completed")
    dist.destroy_process_group()
    logger.info("Process group destroyed")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--style", choices=["megatron", "torchtitan"], required=True)
    ap.add_argument("--save-dir", required=True)
    a = ap.parse_args()
    (megatron if a.style == "megatron" else torchtitan)(a.save_dir)
