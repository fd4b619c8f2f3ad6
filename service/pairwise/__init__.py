"""Pairwise judging of stored runs, imported human preferences, and the pairwise ranking."""
