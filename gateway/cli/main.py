"""The `gateway` command: serve, sim, migrate, keys, tenants, budgets, usage, policy, report,
plan."""

from __future__ import annotations

import click

import gateway.cli.report_html  # registers `report html`
import gateway.cli.sensitivity_commands  # noqa: F401  (registers `classifier eval-sensitivity`)
from gateway.cli.admin_commands import keys, migrate, tenants
from gateway.cli.audit_commands import audit
from gateway.cli.budget_commands import budgets, usage
from gateway.cli.classifier_commands import classifier
from gateway.cli.classify_command import classify_command
from gateway.cli.plan_command import plan
from gateway.cli.policy_commands import policy
from gateway.cli.report_commands import report
from gateway.cli.serve import serve, sim


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("0.1.0", prog_name="gateway")
def cli() -> None:
    """Multi-model LLM routing gateway: one OpenAI-compatible URL for every model."""


cli.add_command(serve)
cli.add_command(sim)
cli.add_command(migrate)
cli.add_command(keys)
cli.add_command(tenants)
cli.add_command(budgets)
cli.add_command(usage)
cli.add_command(policy)
cli.add_command(report)
cli.add_command(classifier)
cli.add_command(classify_command)
cli.add_command(audit)
cli.add_command(plan)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
