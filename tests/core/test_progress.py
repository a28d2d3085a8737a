"""Progress between polls: the rate babysit measures itself for logs that print none."""

from __future__ import annotations

from babysit.core.progress import Progress, ProgressSample


def sample(now: float, step: int) -> ProgressSample:
    return ProgressSample(now=now, step=step, advanced=True, metrics_without_steps=False,
                          cpu_seconds=None, log_visible=True, baseline=False)


def test_the_rate_is_steps_between_two_polls_with_steps():
    progress = Progress(started=0.0)
    progress.observe(sample(30.0, 10))
    progress.observe(sample(60.0, 40))
    assert progress.poll_rate == 1.0


def test_a_restart_is_not_measured_as_slow_training():
    # Step 40 at t=60; the process dies, is restarted, and the new one needs five
    # minutes to load before it writes step 41: that gap is start-up, not a rate.
    progress = Progress(started=0.0)
    progress.observe(sample(30.0, 10))
    progress.observe(sample(60.0, 40))
    progress.restarted(90.0)
    progress.observe(sample(360.0, 41))
    assert progress.poll_rate is None
    progress.observe(sample(390.0, 71))
    assert progress.poll_rate == 1.0
