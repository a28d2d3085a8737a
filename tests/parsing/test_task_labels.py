"""Slurm's `srun -l` labels (`3: …`, ` 0: …`) are read as ranks, once the log shows them
to be labels; a line that only starts with a number and a colon stays as it is."""

from __future__ import annotations

from babysit.parsing.parser import LogParser
from babysit.parsing.task_labels import TaskLabels


def test_interleaved_labels_are_ranks_once_they_go_back_down():
    lines = [f"{rank}: step {s}/100 | loss={2 - s * 0.01:.3f}" for s in range(1, 6)
             for rank in range(4)]
    records = LogParser().feed_lines(lines)
    assert [(r.rank, r.step) for r in records[4:8]] == [(0, 2), (1, 2), (2, 2), (3, 2)]
    assert records[5].metrics == {"loss": 1.98}


def test_labels_right_aligned_to_the_widest_task_number():
    labels = TaskLabels()
    found = [labels.split(f"{rank:2d}: step {s}") for s in range(2) for rank in range(12)]
    assert found[12] == (0, "step 1") and found[23] == (11, "step 1")


def test_a_single_task_labelled_0_is_rank_0():
    records = LogParser().feed_lines(["srun: job 42 step 0"] +
                                     [f"0: step {s}/100 | loss=2.0" for s in range(1, 6)])
    assert [r.rank for r in records if r.step is not None][-2:] == [0, 0]


def test_a_loop_printing_its_step_with_a_colon_is_not_a_task():
    records = LogParser().feed_lines([f"{s}: loss={2 - s * 0.01:.3f}" for s in range(30)])
    assert all(r.rank is None for r in records)
    assert records[3].metrics == {"loss": 1.97}


def test_a_wrapped_terminal_line_starting_0_is_not_a_task():
    """A tmux capture wraps `aux_bce_loss_0: 0.31` after the `_`: few lines start `0: `."""
    lines = []
    for i in range(10):
        lines += [f"iter: {i}  total_loss: 1.2  aux_bce_loss_", "0: 0.3117  aux_dice_loss_0: "
                  "0.1771", "eta: 0:10:00  lr: 0.0001"]
    labels = TaskLabels()
    assert all(labels.split(line)[0] is None for line in lines)


# torchrun under `srun -l`: one torchrun per node (torchtitan's multinode_trainer.slurm:
# `srun torchrun --nnodes 4 --nproc_per_node 8 --rdzv_backend c10d …`), each worker's line
# prefixed by torchrun (`[default3]:`, the local rank, by the default template
# `[${role_name}${local_rank}]:` of torch/distributed/elastic/agent/server/
# local_elastic_agent.py) and then by srun with its task number.

def _nodes_of_workers(prefix: str, bad: tuple[int, int], nodes: int = 2,
                      local: int = 4) -> list[str]:
    lines = []
    for step in range(1, 31):
        for task in range(nodes):
            for rank in range(local):
                number = rank if prefix == "default" else task * local + rank
                if (task, rank) == bad and step > 25:
                    continue
                loss = "nan" if (task, rank) == bad and step == 25 else f"{3 - 0.01 * step:.4f}"
                lines.append(f"{task}: [{prefix}{number}]:step {step} | loss {loss}")
    return lines


def test_a_local_rank_of_an_srun_task_is_named_with_its_task_not_as_a_rank():
    records = LogParser().feed_lines(_nodes_of_workers("default", bad=(1, 2)))
    nan = [r for r in records if r.metrics.get("loss") != r.metrics.get("loss")]
    assert [(r.source, r.step) for r in nan] == [("local rank 2 of task 1", 25)]
    assert len({r.rank for r in records} - {None}) == 8  # task 0's local 2 is not task 1's


def test_a_global_rank_prefix_under_srun_keeps_its_global_rank_and_names_the_task():
    records = LogParser().feed_lines(_nodes_of_workers("rank", bad=(1, 2)))
    nan = [r for r in records if r.metrics.get("loss") != r.metrics.get("loss")]
    assert [(r.source, r.step) for r in nan] == [("rank 6 (task 1)", 25)]


def test_the_same_rank_prefix_under_two_tasks_is_a_local_rank():
    """torchtitan's `--role rank` prints `[rank0]:` on every node: not a global rank."""
    lines = [f"{task}: [rank{rank}]:step {s} | loss 2.0" for s in range(1, 5)
             for task in range(2) for rank in range(2)]
    records = LogParser().feed_lines(lines)
    assert records[-1].source == "local rank 1 of task 1"
    # One key for a worker throughout: no stale "rank 0" lagging behind its own steps.
    assert len({r.rank for r in records if r.rank is not None}) == 4


def test_srun_naming_a_failed_tasks_node_places_the_rank_after_the_fact():
    """srun's own line (Slurm's launch_slurm.c, `_task_finish`: `"%s: %s %s: Exited with
    exit code %d", hosts, task_str, tasks, rc`) names the node of a task that ended."""
    lines = [f"{task}: step {s} | loss 2.0" for s in range(1, 5) for task in range(4)]
    lines.append("srun: error: gpu-12: task 2: Exited with exit code 1")
    records = LogParser().feed_lines(lines)
    assert (records[-1].rank, records[-1].source) == (2, "node gpu-12")
    again = LogParser().feed_lines([*lines, "2: step 5 | loss 2.0"])
    assert again[-1].source == "node gpu-12"


def test_nccl_and_elastic_lines_say_where_workers_ran_and_their_global_rank():
    """NCCL's debug prefix (src/debug.cc: `host:pid:tid [dev] NCCL INFO`) names a task's
    node; torchelastic's failure summary (as in the public OLMo log in
    tests/fixtures/logs/public) pairs a local rank with its global rank."""
    labels = TaskLabels()
    lines = [f"{task}: [default{rank}]:step 1 | loss 2.0" for task in range(2)
             for rank in range(2)] * 2
    lines += ["1: [default1]:gpu-13:4242:4300 [1] NCCL INFO Bootstrap : Using eth0",
              "1:   host      : gpu-13", "1:   rank      : 3 (local_rank: 1)"]
    keys = [labels.split(line)[0] for line in lines]
    assert labels.source_of(keys[7]) == "rank 3 (local rank 1 of task 1, node gpu-13)"
    assert labels.source_of(keys[4]) == "local rank 0 of task 0"
    assert keys[-1] is None  # the agent's own lines are the run's, not a worker's


def test_srun_naming_several_nodes_at_once_places_no_task():
    labels = TaskLabels()
    for line in ["0: a", "1: b", "0: c", "1: d"]:
        labels.split(line)
    labels.split("srun: error: gpu-[12-13]: tasks 0-1: Killed")
    assert labels.source_of(0) == "" and labels.source_of(1) == ""


def test_the_agent_naming_its_failed_worker_is_that_workers_line():
    """torchelastic's `failed (exitcode: 1) local_rank: 2 (pid: …) of binary: …`
    (torch/distributed/elastic/multiprocessing/api.py) under task 1's label."""
    labels = TaskLabels()
    for line in _nodes_of_workers("default", bad=(9, 9))[:16]:
        labels.split(line)
    agent = ("1: E1201 12:00:00.000000 4242 torch/distributed/elastic/multiprocessing/api.py"
             ":882] failed (exitcode: 1) local_rank: 2 (pid: 9204) of binary: /usr/bin/python")
    key, _ = labels.split(agent)
    assert key is not None and labels.source_of(key) == "local rank 2 of task 1"
    assert labels.split("1: I1201 12:00:01.000000 4242 api.py:700] Stopping worker group")[0] \
        is None


def test_one_torchruns_agent_naming_its_failed_worker_names_that_rank():
    labels = TaskLabels()
    for line in [f"[default{r}]:step 1 | loss 2.0" for r in range(4)]:
        labels.split(line)
    line = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) "
            "local_rank: 3 (pid: 31937) of binary: /usr/bin/python")
    assert labels.split(line)[0] == 3
