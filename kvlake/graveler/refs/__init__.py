"""Refs: branches, tags and commits as KV records, ref expressions, branch protection."""
