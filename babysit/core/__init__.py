"""The core: one run state, its lifecycle, the watch loop, the verdict and the fix policy."""
