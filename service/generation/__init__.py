"""Generation: regua calls a model (OpenAI-compatible, Anthropic or the bundled mock) for a task.

Each reply is stored as a run's raw artifact through the normal submit path
(:mod:`service.pipeline.submit`), with a ``generations`` row of what the call cost and took.
"""
