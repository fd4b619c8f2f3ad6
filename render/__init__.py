"""regua: render — the code that runs inside the sandbox.

Playwright (sync API) drives Debian's Chromium: one browser per worker, clean browsing state per
job, the artifact served from a synthetic origin under a strict Content-Security-Policy, every
other request aborted and logged, frames captured at the task's exact timestamps (SMIL, CSS
animations/transitions and Web Animations paused and seeked), and per-part masks. Imports only
``tasks`` and ``regua`` from this project. Entry point: :func:`render.worker.create_handler`.
"""
