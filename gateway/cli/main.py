"""The `gateway` command: serve, sim, migrate, keys, tenants, budgets, usage, policy, report,
plan, classifier, classify, audit. Each command's module is imported when that command runs
(or help lists it): `gateway report economics` never pays for scikit-learn's import."""

from __future__ import annotations

import importlib

import click

# Command name → "module:attribute". A module may register subcommands on import (report
# html, classifier eval-sensitivity): the first module listed is imported first.
COMMANDS = {
    "serve": ("gateway.cli.serve:serve",),
    "sim": ("gateway.cli.serve:sim",),
    "migrate": ("gateway.cli.admin_commands:migrate",),
    "keys": ("gateway.cli.admin_commands:keys",),
    "tenants": ("gateway.cli.admin_commands:tenants",),
    "budgets": ("gateway.cli.budget_commands:budgets",),
    "usage": ("gateway.cli.budget_commands:usage",),
    "policy": ("gateway.cli.policy_commands:policy",),
    "report": ("gateway.cli.report_html:report", "gateway.cli.report_commands:report"),
    "classifier": ("gateway.cli.sensitivity_commands:classifier",
                   "gateway.cli.classifier_commands:classifier"),
    "classify": ("gateway.cli.classify_command:classify_command",),
    "audit": ("gateway.cli.audit_commands:audit",),
    "plan": ("gateway.cli.plan_command:plan",),
}


class LazyCommands(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        targets = COMMANDS.get(cmd_name)
        if targets is None:
            return None
        for target in targets:  # registering modules first; the last names the command
            module, attribute = target.split(":")
            found = getattr(importlib.import_module(module), attribute)
        command: click.Command = found
        return command


@click.group(cls=LazyCommands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("0.1.0", prog_name="gateway")
def cli() -> None:
    """Multi-model LLM routing gateway: one OpenAI-compatible URL for every model."""


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
