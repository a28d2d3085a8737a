"""Two-process CPU DDP with the gloo backend, launched by torchrun.

    torchrun --nproc_per_node 2 ddp_gloo.py --scenario clean
    torchrun --nproc_per_node 2 ddp_gloo.py --scenario timeout

clean:   both ranks train 30 steps, print their own step lines (interleaved in
         the shared log) and finish.
timeout: rank 1's data shard is 12 batches shorter (an uneven-split bug), so
         after step 18 it leaves the training loop and spends ~40 s in local
         post-processing (a sleep standing in for slow evaluation/upload)
         while rank 0 is blocked inside the DDP gradient all_reduce of step
         19.  The process group was created with a 10 s timeout, so rank 0's
         collective really times out inside gloo and torchrun's elastic agent
         tears the job down.  Only the stall is simulated; the timeout and
         everything torchrun prints are real.
"""
import argparse
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", choices=["clean", "timeout"], default="clean")
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()

    dist.init_process_group("gloo", timeout=timedelta(seconds=10))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(100 + rank)

    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    w = torch.linspace(-1, 1, 32).unsqueeze(1)

    my_steps = args.steps
    if args.scenario == "timeout" and rank == 1:
        my_steps = args.steps - 12
    print(f"[rank{rank}] world_size={world} backend={dist.get_backend()} steps={my_steps}", flush=True)

    for step in range(1, my_steps + 1):
        x = torch.randn(64, 32)
        y = x @ w + 0.05 * torch.randn(64, 1)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()  # DDP all_reduces the gradients here
        opt.step()
        avg = loss.detach().clone()
        dist.all_reduce(avg)
        avg /= world
        print(f"[rank{rank}] step {step}/{args.steps} loss {loss.item():.4f} avg_loss {avg.item():.4f}",
              flush=True)
        time.sleep(0.05)

    if args.scenario == "timeout" and rank == 1:
        print(f"[rank{rank}] data shard exhausted after {my_steps} steps, running local eval", flush=True)
        time.sleep(40)

    dist.barrier()
    print(f"[rank{rank}] training finished", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
