"""Staging: uncommitted entries per branch token, the writer flow and range tombstones."""
