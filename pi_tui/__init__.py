"""pi_tui: a terminal coding agent whose sessions are append-only JSONL trees."""

__version__ = "0.1.0"
