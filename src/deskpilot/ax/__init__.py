"""Snapshots as data: element IDs, the lean text rendering models read, and diffs."""
