# The renderer image: the sandbox of the Docker deployment. Debian's Chromium driven by Playwright
# (executable_path=/usr/bin/chromium; Playwright's own browser download is never used), behind the
# Unix-socket bridge (sandbox/socket_bridge.py). Runs as a non-root user; compose adds a read-only
# root, network_mode none, no-new-privileges and cap_drop ALL.
# Build from the repository root:  docker build -f docker/renderer.Dockerfile -t regua-renderer .
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        chromium fonts-dejavu-core util-linux \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --gid 10001 regua \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp/home \
        --shell /usr/sbin/nologin regua \
    && mkdir -p /run/regua && chown 10001:10001 /run/regua

WORKDIR /app
COPY pyproject.toml README.md ./
COPY regua ./regua
COPY tasks ./tasks
COPY sandbox ./sandbox
COPY render ./render
COPY checks ./checks
COPY judges ./judges
COPY service ./service
RUN pip install --no-compile . && chmod -R a-w /app

USER 10001:10001
ENV HOME=/tmp/home
ENTRYPOINT ["python", "-m", "sandbox.socket_bridge", "--socket", "/run/regua/render.sock", \
            "--handler", "render.worker:create_handler"]
CMD ["--memory-mb", "4096", "--max-processes", "512", "--max-workers", "4"]
