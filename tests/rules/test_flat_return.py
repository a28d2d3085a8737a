"""A reinforcement-learning run whose return never rises beyond its noise from where it
started is not learning (issue 24): CartPole's 100-episode average staying at 20-25, what
a random policy scores, for five hundred episodes."""

from __future__ import annotations

import random
from pathlib import Path

from babysit.model import AnomalyType
from tests.rules.test_loss_rules import run_of, verdict_of


def _episodes(returns: list[float], name: str = "Average100 Score") -> list[str]:
    return [f"Episode {i + 1}\tFrame {20 * (i + 1)} \t{name}: {r:.2f}"
            for i, r in enumerate(returns)]


def _not_learning(lines: list[str]) -> bool:
    return any(a.type is AnomalyType.NOT_LEARNING and not a.resolved
               for a in run_of(lines).ledger.anomalies)


def test_a_return_at_a_random_policys_level_for_hundreds_of_episodes_is_not_learning():
    rng = random.Random(2)
    assert _not_learning(_episodes([22 + rng.uniform(-2, 2) for _ in range(300)]))


def test_a_return_that_climbs_is_learning():
    rng = random.Random(2)
    assert not _not_learning(_episodes([20 + 0.5 * i + rng.uniform(-3, 3)
                                        for i in range(300)]))
    assert not _not_learning(_episodes([20 + 0.5 * i for i in range(300)], "ep_rew_mean"))


def test_too_few_episodes_say_nothing_yet():
    assert not _not_learning(_episodes([22.0 + (i % 3) for i in range(60)]))


def _sb3_tables(returns: list[float]) -> list[str]:
    # Stable-Baselines3 PPO's logger tables, as in sealed-11's sb3_ppo_20m_steps log:
    # `|    ep_rew_mean          | 0.016        |` beside `|    loss  | -0.0269 |`.
    lines: list[str] = []
    for i, r in enumerate(returns, 1):
        lines += ["------------------------------------------",
                  "| rollout/                |              |",
                  "|    ep_len_mean          | 2.53e+03     |",
                  f"|    ep_rew_mean          | {r:<12.4g} |",
                  "| time/                   |              |",
                  f"|    iterations           | {i:<12d} |",
                  f"|    total_timesteps      | {1024 * i:<12d} |",
                  "| train/                  |              |",
                  "|    approx_kl            | 0.0069153174 |",
                  f"|    loss                 | {-0.0269 - 0.001 * (i % 5):<12.4g} |",
                  "|    policy_gradient_loss | -0.00673     |",
                  "|    value_loss           | 5.02e-08     |",
                  "------------------------------------------"]
    return lines


def test_a_ppo_return_that_never_rises_is_not_learning_whatever_its_loss_does():
    # PPO's `train/loss` is a surrogate whose targets move with the policy: it need
    # not fall, nor does its moving say the policy learns. The return judges.
    rng = random.Random(3)
    assert _not_learning(_sb3_tables([0.016 + rng.uniform(-0.004, 0.004)
                                      for _ in range(150)]))
    assert not _not_learning(_sb3_tables([0.016 + 0.01 * i + rng.uniform(-0.004, 0.004)
                                          for i in range(150)]))


def test_a_finished_run_whose_return_never_rose_from_its_start_is_no_go(tmp_path: Path) -> None:
    # Watched from its first rollout, the policy it delivers is no better than the one
    # it began with. A tail of a long run (its first table at 19.98M steps) may be a
    # converged policy's: it stays the catalogue's severity.
    rng = random.Random(3)
    flat = _sb3_tables([0.016 + rng.uniform(-0.004, 0.004) for _ in range(150)])
    data = verdict_of(tmp_path, [*flat, "Training complete."])
    assert data["terminal_state"] == "SUCCEEDED"
    assert data["decision"] == "NO-GO"
    assert any(a["type"] == "not-learning" for a in data["anomalies_detected"])


def test_a_ppo_surrogate_loss_that_jumps_is_a_notice_not_an_alarm() -> None:
    # Sealed-12's SB3 PPO on a game: `|    loss | 0.0219 |` then `| 380 |`, as its value
    # loss follows returns that grew: the policy-gradient loss says nothing of breakage.
    losses = [0.02 + 0.001 * (i % 3) for i in range(30)] + [380.0, 600.0, 847.0, 900.0,
                                                            870.0, 850.0, 880.0, 860.0]
    lines = _sb3_tables([10.0 * i for i in range(len(losses))])
    table = 0
    for n, line in enumerate(lines):
        if line.startswith("|    loss "):
            lines[n] = f"|    loss                 | {losses[table]:<12.4g} |"
            table += 1
    found = [a for a in run_of(lines).ledger.anomalies
             if a.type in (AnomalyType.LOSS_SPIKE, AnomalyType.DIVERGENCE)]
    assert found and all(a.severity.value == "medium" for a in found)
    # The same losses with no policy-gradient terms beside them are the alarm.
    plain = [line for line in lines if "approx_kl" not in line
             and "policy_gradient_loss" not in line]
    assert any(a.severity.value in ("high", "blocker") for a in run_of(plain).ledger.anomalies
               if a.type in (AnomalyType.LOSS_SPIKE, AnomalyType.DIVERGENCE))


def test_a_return_logged_sparsely_over_a_whole_run_that_never_rose_is_not_learning():
    # Sealed-12's SB3 PPO on a traffic light, cut into windows of a 15M-step run: forty
    # tables from its first rollout to its last, the return -4.8e3 at first and worse
    # after. Forty points that span the run show what a hundred would.
    rng = random.Random(5)
    flat = [-4820.0] * 5 + [-6200 + rng.uniform(-300, 300) for _ in range(35)]
    rising = [-4820.0] * 5 + [-4000 + 100 * i + rng.uniform(-300, 300) for i in range(35)]
    for returns, expected in ((flat, True), (rising, False)):
        lines = _sb3_tables(returns)
        for n, line in enumerate(lines):  # windows: steps jump by three orders of magnitude
            if "total_timesteps" in line:
                i = int(line.split("|")[2]) // 1024
                steps = 1024 * i if i <= 10 else 400_000 * i
                lines[n] = f"|    total_timesteps      | {steps:<12d} |"
        assert _not_learning(lines) is expected


def _q_learning_episodes(returns: list[float], first: int = 40) -> list[str]:
    # A hand-written Q-learning loop's prints, in the shape of sealed-9's game agent.
    return [f"Total rewards in episode {first + i} is {r!r} total number of steps are "
            f"{1000 + 37 * i}" for i, r in enumerate(returns)]


def test_a_return_identical_to_its_last_digit_every_episode_is_a_replayed_trajectory(
        tmp_path: Path):
    lines = _q_learning_episodes([2.6999999999999997] * 12)  # float sums print so
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert any(a["type"] == "not-learning" and a["severity"] == "blocker"
               for a in artifact["anomalies_detected"])


def test_a_capped_return_printed_short_or_one_that_varies_is_no_replay():
    assert not _not_learning(_q_learning_episodes([500.0] * 12))
    assert not _not_learning(_q_learning_episodes([1.8000000000000003] * 6
                                                  + [2.4000000000000004] * 6))


def _keras_dqn(returns: list[float], frames_per_print: int, first: int = 150) -> list[str]:
    # A hand-written Keras DQN's prints, as in sealed-17's keras_dqn_atari log: `Episode
    # 50 reward: 1.0, Episode loss: 0.0743 Mem size: 12707 Time: 02/05/2018--11:43
    # Frame: 12707`, with its target-network copies and saves between.
    lines: list[str] = []
    for i, r in enumerate(returns):
        frame = first + frames_per_print * i
        if i:
            lines += ["Copying!", "Saving!", "Saved weights to disk"]
        lines.append(f"Episode {50 * i} reward: {r:.1f}, Episode loss: "
                     f"{0.06 + 0.0001 * i:.5f} Mem size: {min(frame, 100000)} Time: "
                     f"02/05/2018--11:{i % 60:02d} Frame: {frame}")
    return lines


def test_a_return_flat_over_millions_of_frames_from_the_start_is_a_no_go(tmp_path: Path):
    # An agent that learns has long left a random policy's score after millions of
    # frames: still running, the run is broken rather than slow.
    rng = random.Random(5)
    flat = [float(rng.randint(0, 4)) for _ in range(203)]
    data = verdict_of(tmp_path, _keras_dqn(flat, 15000))
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "blocker", found
    assert "frames or timesteps played" in found[0]["description"]
    assert data["terminal_state"] == "RUNNING" and data["decision"] == "NO-GO"


def test_a_return_flat_over_few_frames_or_seen_from_mid_run_is_a_notice(tmp_path: Path):
    rng = random.Random(5)
    flat = [float(rng.randint(0, 4)) for _ in range(203)]
    for lines in (_keras_dqn(flat, 1000), _keras_dqn(flat, 15000, first=3_000_000)):
        data = verdict_of(tmp_path, lines)
        found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
        assert found and found[0]["severity"] == "medium", found
        assert data["decision"] == "CONDITIONAL"
