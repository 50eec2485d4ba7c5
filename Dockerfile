# The gateway image: `gateway serve` by default; the same image runs `gateway sim` and
# `gateway migrate` (see docker-compose.yml). `docker run -p 8080:8080 IMAGE` alone is the
# demo (embedded SQLite, the default policy's simulated backends started in the container).
#
# Two stages: `build` installs the package and its dependencies into a virtualenv; the runtime
# stage copies only that virtualenv and the files read at run time (migrations, policies),
# owned by root and so read-only to the unprivileged user the gateway runs as. No secret is
# baked in: every key comes at run time, from a file (GATEWAY_*_FILE) or the environment.
# One pinned base for both stages: the virtualenv's interpreter path must exist in the runtime.
ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
WORKDIR /src
# Dependencies in a layer of their own (from pyproject's list), so a code change does not
# reinstall numpy and friends. EXTRAS adds optional groups: `--build-arg
# EXTRAS=presidio` bakes in Presidio and its spaCy model (then GATEWAY_PRESIDIO=true); the
# serving image needs no `train` (scikit-learn, scipy: training the classifiers offline).
ARG EXTRAS=""
COPY pyproject.toml README.md ./
RUN EXTRAS="${EXTRAS}" python -c "import os, tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
      extra = [r for e in os.environ['EXTRAS'].split(',') if e for r in p['optional-dependencies'][e]]; \
      print('\n'.join(p['dependencies'] + extra))" \
      > /tmp/requirements.txt \
 && /opt/venv/bin/pip install --no-cache-dir -r /tmp/requirements.txt
COPY gateway ./gateway
# gateway/policies and gateway/migrations link to these two: the wheel carries them as files.
COPY migrations ./migrations
COPY policies ./policies
# A real (non-editable) install: the wheel carries the package data the gateway reads at run
# time (the demo policy, migrations, classify/models/*.json, budget/lua/*.lua; see
# [tool.setuptools.package-data]).
RUN /opt/venv/bin/pip install --no-cache-dir --no-deps . \
 && /opt/venv/bin/python -c "from importlib.resources import files; \
      assert files('gateway.classify').joinpath('models/complexity.json').is_file(); \
      assert files('gateway.budget').joinpath('lua/admit.lua').is_file(); \
      assert files('gateway').joinpath('policies/default.yaml').is_file(); \
      assert files('gateway').joinpath('migrations/env.py').is_file()"

FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="llm-routing-gateway" \
      org.opencontainers.image.description="One OpenAI-compatible URL in front of vLLM and commercial LLM APIs" \
      org.opencontainers.image.licenses="Apache-2.0"
# A numeric uid, so orchestrators can verify runAsNonRoot without reading /etc/passwd.
RUN groupadd --system --gid 10001 gateway \
 && useradd --system --uid 10001 --gid 10001 --home-dir /app --no-create-home \
      --shell /usr/sbin/nologin gateway
WORKDIR /app
COPY --from=build /opt/venv /opt/venv
COPY migrations ./migrations
COPY policies ./policies
COPY alembic.ini ./
# The only writable places: the audit spool (rows kept while the database is unreachable; mount
# a volume here so they survive a restart) and .gateway/ (the embedded demo's SQLite file).
RUN install -d -o 10001 -g 10001 -m 0750 /var/lib/gateway/audit-spool /app/.gateway
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    GATEWAY_HOME=/app/.gateway \
    GATEWAY_AUDIT_SPOOL_DIR=/var/lib/gateway/audit-spool
USER 10001:10001
EXPOSE 8080
# Liveness only (/health); readiness (/ready: database, Redis, audit) is for load balancers.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/health', timeout=2)"]
ENTRYPOINT ["gateway"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
