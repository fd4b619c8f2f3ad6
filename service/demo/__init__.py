"""``regua demo`` and ``regua run``: the embedded service with the bundled samples loaded.

Also the demo's MOCK vision judge: a local chat-completions server that answers from the
samples' declared truth, labelled MOCK wherever it is shown.
"""
