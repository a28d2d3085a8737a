"""A GAN whose generator loss is exactly 0 while its discriminator's sits in the tens has
saturated: no gradient reaches the generator (issue 24). Shape: sealed-15's
carpedm20 DCGAN-tensorflow run, `Epoch: [ 3/200] [   1/   4] time: 155.1860, d_loss:
82.39799500, g_loss: 0.00000000` on every step."""

from __future__ import annotations

from pathlib import Path

from babysit.rules.gan_saturated import saturated_pair
from tests.rules.test_loss_rules import verdict_of


def dcgan(d_losses: list[float], g_losses: list[float]) -> list[str]:
    lines = []
    for i, (d, g) in enumerate(zip(d_losses, g_losses, strict=True)):
        lines += ["in train ",
                  f"Epoch: [{2 + i // 4:2d}/200] [{i % 4:4d}/   4] time: {100 + 10 * i:.4f}, "
                  f"d_loss: {d:.8f}, g_loss: {g:.8f}"]
    return lines


def test_generator_at_0_beside_a_discriminator_in_the_tens_is_a_no_go(tmp_path: Path):
    d = [61.5 + 7 * (i % 5) for i in range(12)]
    data = verdict_of(tmp_path, dcgan(d, [0.0] * 12))
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "blocker", found
    assert "saturated" in found[0]["description"]
    assert data["terminal_state"] == "RUNNING" and data["decision"] == "NO-GO"


def test_players_in_an_ordinary_game_are_left_alone(tmp_path: Path):
    d = [0.6 + 0.05 * (i % 4) for i in range(12)]
    g = [1.8 + 0.1 * (i % 3) for i in range(12)]
    data = verdict_of(tmp_path, dcgan(d, g))
    assert [a for a in data["anomalies_detected"] if a["type"] == "not-learning"] == []


def test_a_few_saturated_points_or_a_player_at_0_beside_an_ordinary_one_say_nothing(
        tmp_path: Path):
    data = verdict_of(tmp_path, dcgan([70.0, 65.0, 80.0, 0.9, 0.8], [0.0] * 5))
    assert [a for a in data["anomalies_detected"] if a["type"] == "not-learning"] == []
    assert saturated_pair({"d_loss": 0.7, "g_loss": 0.0}) is None
    assert saturated_pair({"d_loss": 66.7, "g_loss": 0.0}) == ("g_loss", "d_loss")


def bmsg(d_losses: list[float], g_losses: list[float]) -> list[str]:
    # BMSG-GAN's train.py, as in sealed-17's bmsg_gan log: `Elapsed [9:53:02.944594]
    # batch: 42828  d_loss: 0.000000  g_loss: 23.858597`.
    return [f"Elapsed [{1 + i // 6}:{(7 * i) % 60:02d}:{(13 * i) % 60:02d}.{1000 + i}] "
            f"batch: {300 + 500 * i}  d_loss: {d:.6f}  g_loss: {g:.6f}"
            for i, (d, g) in enumerate(zip(d_losses, g_losses, strict=True))]


def test_a_discriminator_at_0_with_blips_beside_a_far_off_generator_is_a_no_go(
        tmp_path: Path):
    # The discriminator has won outright: 0 on all points but a blip now and then, the
    # generator's loss swinging far off (one point below the far-off mark).
    d = [0.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 0.04, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    g = [21.0, 12.5, 11.0, 15.9, 14.0, 31.0, 17.5, 10.8, 37.0, 12.7, 7.0, 18.5, 16.4, 24.0]
    data = verdict_of(tmp_path, bmsg(d, g))
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "blocker", found
    assert "d_loss has been 0 (below 0.001) on" in found[0]["description"]
    assert data["terminal_state"] == "RUNNING" and data["decision"] == "NO-GO"


def test_a_discriminator_at_0_on_a_few_points_or_beside_an_ordinary_generator_is_left_alone(
        tmp_path: Path):
    g_far = [21.0, 12.5, 11.0, 15.9, 14.0, 31.0, 17.5, 10.8, 37.0, 12.7, 17.0, 18.5]
    some_zeros = [0.0 if i % 2 else 0.3 for i in range(12)]
    won_but_ordinary = [0.0] * 11 + [0.1]
    for d, g in ((some_zeros, g_far), (won_but_ordinary, [2.0 + 0.3 * (i % 4) for i in range(12)])):
        data = verdict_of(tmp_path, bmsg(d, g))
        assert [a for a in data["anomalies_detected"] if a["type"] == "not-learning"] == []


def udacity(d_losses: list[float], g_losses: list[float]) -> list[str]:
    # The Udacity face-generation notebook's loop, as in sealed-176's DCGAN run:
    # `Epoch [    9/   50] | d_loss: 0.0000 | g_loss: 47.0875`.
    return [f"Epoch [{1 + i // 4:5d}/   50] | d_loss: {d:.4f} | g_loss: {g:.4f}"
            for i, (d, g) in enumerate(zip(d_losses, g_losses, strict=True))]


def test_a_won_game_whose_discriminator_takes_a_batch_now_and_then_stays_over(
        tmp_path: Path):
    """A discriminator at 0 on most points of the run, then a batch of 0.76 now and then
    (four in each twelve points), its generator at 20 to 70: the blips pull the last
    twelve points below nine at 0, but the game never resumed. It ends NO-GO, not
    resolved on the blips."""
    d = [0.0] * 40 + [0.7633 if i % 12 in (0, 5, 6, 11) else 0.0 for i in range(60)]
    g = [20.0 + (i * 7) % 50 for i in range(100)]
    data = verdict_of(tmp_path, udacity(d, g))
    assert data["decision"] == "NO-GO", data["summary"]
