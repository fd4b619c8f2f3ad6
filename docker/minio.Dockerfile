# MinIO for the artifact store, run as a non-root user: the only change to the upstream image is
# a /data folder owned by uid 10001, so the named volume mounted there is writable without root.
# Pin a release (minio/minio:RELEASE.…) in production.
FROM minio/minio:latest

USER root
RUN mkdir -p /data && chown 10001:10001 /data
USER 10001:10001
