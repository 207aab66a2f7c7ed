"""kvlake: a versioned data lake whose metadata lives behind a narrow KV interface."""

__version__ = "0.1.0"
