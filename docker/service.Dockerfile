# The service image: API (`regua serve`) and queue workers (`regua worker`). It never renders
# untrusted SVG itself: jobs go to the renderer container through the socket bridge
# (REGUA_SANDBOX_BACKEND=socket). Runs as a non-root user; compose adds a read-only root,
# no-new-privileges and cap_drop ALL.
# Build from the repository root:  docker build -f docker/service.Dockerfile -t regua-service .
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

RUN groupadd --gid 10001 regua \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp/home \
        --shell /usr/sbin/nologin regua \
    && mkdir -p /data /run/regua && chown 10001:10001 /data /run/regua

WORKDIR /app
COPY pyproject.toml README.md ./
COPY regua ./regua
COPY tasks ./tasks
COPY checks ./checks
COPY sandbox ./sandbox
COPY render ./render
COPY judges ./judges
COPY service ./service
RUN pip install --no-compile . && chmod -R a-w /app

USER 10001:10001
ENV HOME=/tmp/home \
    REGUA_DATA_DIR=/data \
    REGUA_SANDBOX_BACKEND=socket \
    REGUA_SANDBOX_SOCKET=/run/regua/render.sock
EXPOSE 8000
ENTRYPOINT ["regua"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
