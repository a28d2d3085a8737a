"""Every rank counts, and is named where it ran (issue 24): a NaN on one rank of an
`srun -l` job is the run's, named with its rank, that rank's own step and the node srun
or NCCL names; a rank 30 % slower is a straggler named with its node. Line shapes: srun's
label (`3: `), Slurm's `_task_finish` message, Megatron's iteration line, NCCL's debug
prefix."""

from __future__ import annotations

import random

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.model import Anomaly, AnomalyType
from babysit.parsing.parser import LogParser


def anomalies(lines: list[str]) -> list[Anomaly]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return list(run.ledger.anomalies)


def test_a_nan_on_task_2_of_4_is_named_with_its_node_once_srun_says_it():
    lines = []
    for step in range(1, 61):
        for task in range(4):
            if task == 2 and step > 57:
                continue
            loss = "nan" if (task, step) == (2, 57) else f"{3 - 0.01 * step:.4f}"
            lines.append(f"{task}: step {step} | loss {loss} | lr 3e-4")
    lines.append("srun: error: gpu-12: task 2: Exited with exit code 1")
    [nan] = [a for a in anomalies(lines) if a.type is AnomalyType.NAN_INF]
    assert nan.step == 57 and "rank 2 (node gpu-12)" in nan.description


def test_a_failure_on_a_lagging_rank_carries_that_ranks_step_not_the_leaders():
    lines = []
    for step in range(1, 41):
        lines += [f"0: step {step} | loss 2.0", f"1: step {step} | loss 2.0"]
        if step <= 30:
            lines.append(f"2: step {step} | loss 2.0")
    lines += ["2: Traceback (most recent call last):", '2:   File "train.py", line 3',
              "2: RuntimeError: CUDA error: an illegal memory access was encountered"]
    found = [a for a in anomalies(lines) if a.type is AnomalyType.CUDA_ERROR]
    assert found and found[0].step == 30 and "rank 2" in found[0].description


def test_a_task_30_percent_slower_is_a_straggler_named_with_its_node():
    rng = random.Random(2)
    lines = []
    for step in range(1, 41):
        for task in range(4):
            took = (650 if task == 3 else 500) * rng.uniform(0.97, 1.03)
            lines.append(f"{task}:  iteration {step:8d}/    1000 | elapsed time per iteration "
                         f"(ms): {took:.1f} | learning rate: 3.000E-04 | lm loss: "
                         f"{9 - 0.01 * step:.6E} |")
    lines += [f"{task}: gpu-{10 + task}:{1000 + task}:{1100 + task} [0] NCCL INFO comm 0x55 "
              f"rank {task} nranks 4 - Init COMPLETE" for task in range(4)]
    [slow] = [a for a in anomalies(lines) if a.type is AnomalyType.STRAGGLER]
    assert "rank 3 (node gpu-13)" in slow.description and "slower" in slow.description


def test_a_nan_on_a_torchrun_worker_under_srun_names_its_task_local_rank_and_node():
    """`srun -l torchrun --nproc_per_node 4 …` on two nodes: `1: [default2]:` is local
    rank 2 of task 1, not rank 1; NCCL's debug prefix names task 1's node."""
    lines = []
    for step in range(1, 41):
        for task in range(2):
            for local in range(4):
                if (task, local) == (1, 2) and step > 33:
                    continue
                loss = "nan" if (task, local, step) == (1, 2, 33) else f"{3 - 0.01 * step:.4f}"
                lines.append(f"{task}: [default{local}]:step {step} | loss {loss}")
    lines.append("1: [default2]:gpu-13:4242:4300 [2] NCCL INFO comm 0x55 rank 6 nranks 8")
    [nan] = [a for a in anomalies(lines) if a.type is AnomalyType.NAN_INF]
    assert nan.step == 33
    assert "local rank 2 of task 1 on node gpu-13" in nan.description
    assert "rank 1" not in nan.description.replace("local rank", "")


def test_torchtitans_local_rank_prefix_on_two_nodes_raises_no_straggler():
    """torchtitan's run_train.sh passes `--role rank`, so every node prints `[rank0]:`…
    `[rank3]:` (local ranks); under `srun -l` two tasks print the same prefixes. Each
    worker keeps one identity from its first line: none lags behind itself."""
    rng = random.Random(5)
    lines = [f"{task}: [rank{local}]:[titan] step: {step:2d}  loss: {9 - 0.01 * step:.4f}  "
             f"tps: {6543 * rng.uniform(0.97, 1.03):,.0f}  mfu: 35.12%"
             for step in range(1, 41) for task in range(2) for local in range(4)]
    assert [a for a in anomalies(lines) if a.type is AnomalyType.STRAGGLER] == []
