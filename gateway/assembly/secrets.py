"""The gateway's own keys (admin, metrics) as handlers read them: re-read from their files
when those change, on SIGHUP and on every policy reload."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

from pydantic import SecretStr

from gateway.assembly.tasks import keep_running
from gateway.policy.store import PolicyStore
from gateway.secret_files import GatewaySecrets, RotatingSecret
from gateway.secret_rotation import on_hangup, reread_everything, watch_secret_files
from gateway.settings import Settings


def gateway_secrets(settings: Settings) -> GatewaySecrets:
    def secret(name: str, value: SecretStr | None, path: Path | None) -> RotatingSecret:
        # Settings has read the file once already (start-up errors surface there).
        return RotatingSecret(name, value.get_secret_value() if value else None, path)
    return GatewaySecrets(
        secret("GATEWAY_ADMIN_KEY", settings.admin_key, settings.admin_key_file),
        secret("GATEWAY_METRICS_KEY", settings.metrics_key, settings.metrics_key_file),
    )


def keep_secrets_fresh(stack: AsyncExitStack, settings: Settings, secrets: GatewaySecrets,
                       policy: PolicyStore) -> None:
    # A policy reload re-reads provider key files; the gateway's own keys go with it.
    policy.subscribe(lambda _: secrets.refresh(force=True))
    keep_running(stack, watch_secret_files(secrets, settings.policy_poll_interval_s),
                 "secret-files")
    stack.callback(on_hangup(lambda: reread_everything(secrets, policy)))
