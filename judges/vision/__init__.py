"""The ``vision-llm`` judge: one criterion per request to a vision language model.

:mod:`.judge` is the judge and its HTTP calls (OpenAI-compatible and Anthropic APIs);
:mod:`.prompt` builds the request from the criterion and the rendered frames and reads the
model's JSON reply strictly (shared with the pairwise judge); :mod:`.templates` holds the named,
versioned prompt templates a profile names (``prompt: criterion-json-strict@1``). Importing this
package loads nothing: the judge module (and its HTTP client) is imported only when a vision
judge is created.
"""
