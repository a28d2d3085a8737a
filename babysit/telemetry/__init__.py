"""Hardware telemetry for a watched run: GPU utilisation and memory, read locally."""
