"""How much useful work a run does: MFU, throughput, goodput, and profiler traces."""
