"""How the worker's Chromium is launched: its command-line switches, fonts and configuration.

Debian's Chromium (``/usr/bin/chromium``) with its own sandbox on (inside bubblewrap, as uid
nobody); Playwright's own browser download is never used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FONTS_DIR = Path(__file__).resolve().parent / "fonts"
FONTCONFIG_FILE = FONTS_DIR / "fonts.conf"
SUPPORTED_FONT_SETS = ("dejavu",)

LAUNCH_ARGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-quic",
    "--disable-gpu",
    "--disable-gpu-vsync",
    # No "--disable-frame-rate-limit": unthrottled begin frames make the browser and GPU
    # processes redraw back to back while a screenshot is pending, which more than doubled the
    # CPU per job (measured 40 -> 23 ms per static job) and starved the other workers; frames
    # are pixel-identical either way (seeked-and-paused state, see below).
    # Animations run on the main thread only, so a seeked-and-paused state is exactly what the
    # next captured frame shows (no compositor-thread copy still running for a frame or two).
    "--disable-threaded-animation",
    "--disable-threaded-scrolling",
    "--disable-checker-imaging",
    # Partial raster re-rasters only the invalidated part of a tile, which made a frame depend on
    # which frames were drawn before it (up to 1,000 edge pixels off by up to 35 levels at the
    # same seeked state, measured on samples/outputs/animated-pedalling.svg); without it a frame
    # is a function of the document's state alone, so an equal state may reuse a capture.
    "--disable-partial-raster",
    # One renderer process for every document of the browser: each navigated drawing (a fresh
    # opaque origin) otherwise started a renderer of its own, ~250 of its ~590 CPU ms. No
    # weaker than the swap path, where every swapped drawing of a context shares the shell's
    # renderer: no page script runs, each drawing keeps its own origin and CSP, the context is
    # replaced after any failure, and bubblewrap (no network, uid nobody) is the boundary.
    "--disable-site-isolation-trials",
    "--dns-prefetch-disable",
    "--disable-preconnect",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--metrics-recording-only",
    "--mute-audio",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    # WebUIOmniboxPopup, WebUIOmniboxAimPopup: every new browser context (a headless window)
    # otherwise loaded two chrome://omnibox-popup.top-chrome pages in a WebUI renderer of their
    # own, ~0.5 CPU s per context (at each worker start and each context replacement).
    "--disable-features=NetworkPrediction,NetworkServiceInProcess2,BackForwardCache,"
    "RenderDocument,ProactivelySwapBrowsingInstance,Translate,OptimizationHints,MediaRouter,"
    "AutofillServerCommunication,CertificateTransparencyComponentUpdater,"
    "DialMediaRouteProvider,InterestFeedContentSuggestions,SpeculationRulesPrefetchFuture,"
    "Prerender2,PreconnectToSearch,LoadingPredictorUseLocalPredictions,"
    "WebUIOmniboxPopup,WebUIOmniboxAimPopup",
    "--blink-settings=dnsPrefetchingEnabled=false",
)


DEFAULT_CONTEXT_REUSE_JOBS = 500
"""Jobs a browser context serves before it is replaced (as many as a worker serves by default).

Each replacement costs a new renderer and its warm-up: at 100 (the value before), 68-75 against
54-56 CPU ms per static file (one worker, 78 files x 2, load 12-16). Drawings never share state
through the context: no page script runs, a navigated drawing gets a fresh origin, and a swapped
one replaces the shell's whole tree; the context is also replaced after any failure.
"""


@dataclass(frozen=True)
class BrowserConfig:
    """How the worker's browser is launched and recycled."""

    chromium_path: str = "/usr/bin/chromium"
    chromium_no_sandbox: bool = False
    context_reuse_jobs: int = DEFAULT_CONTEXT_REUSE_JOBS
    swap_documents: bool = True
    extra_args: tuple[str, ...] = ()
