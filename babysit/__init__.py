"""babysit: watch a running ML training job and judge whether its result can be trusted."""

__version__ = "0.1.0"
