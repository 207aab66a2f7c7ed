"""Commits and history: committing, merging, reverting, resetting, diffs and logs."""
