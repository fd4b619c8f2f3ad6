"""Experiments: grids of models, tasks and repeats, generated and scored as one study."""
