# The gateway image: `gateway serve` by default; the same image runs `gateway sim` and
# `gateway migrate` (see docker-compose.yml).
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY gateway ./gateway
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 gateway
WORKDIR /app
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
# Migrations and policies live beside the package (the app finds migrations at ../migrations).
COPY migrations ./migrations
COPY policies ./policies
COPY alembic.ini ./
ENV GATEWAY_POLICY_PATH=/app/policies/default.yaml \
    PYTHONUNBUFFERED=1
USER gateway
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/health', timeout=2)"
ENTRYPOINT ["gateway"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
