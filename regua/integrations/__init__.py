"""regua where people already evaluate: scorers for other harnesses (optional extras).

:mod:`regua.integrations.inspect` is an Inspect AI scorer (``pip install regua[inspect]``).
"""
