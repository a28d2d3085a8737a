"""A training loop that never finishes on its own; record_all.sh kills it
with SIGKILL from outside (as the kernel OOM killer or a scheduler would).

Prints with flush=True so the lines written before the kill are in the log.
"""
import time

import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(2048, 32)
y = (x.sum(dim=1, keepdim=True) > 0).float()
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

print("starting training: 10000 steps", flush=True)
for step in range(1, 10001):
    idx = torch.randint(0, len(x), (64,))
    loss = nn.functional.binary_cross_entropy_with_logits(model(x[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}/10000 loss {loss.item():.4f}", flush=True)
    time.sleep(0.2)  # pace the loop like a slower real step
