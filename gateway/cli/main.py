"""The `gateway` command. Subcommands are imported only when run, so `gateway --help` and usage
errors answer at once instead of loading the web stack and the classifiers first."""

from __future__ import annotations

import importlib
import os
import sys
import traceback

import click

from gateway.errors import SetupError

# name → (module that defines it, attribute, one-line help shown by `gateway --help`). A module
# listed here may register further subcommands on its group when imported (report html,
# classifier eval-sensitivity), so the module named is the one that pulls in all of them.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "serve": ("gateway.cli.serve", "serve", "Run the gateway (no configuration: the demo)."),
    "demo": ("gateway.cli.demo_commands", "demo", "Drive the demo: send realistic traffic."),
    "sim": ("gateway.cli.serve", "sim", "Run one simulated vLLM, OpenAI or Anthropic server."),
    "migrate": ("gateway.cli.admin_commands", "migrate", "Apply the database migrations."),
    "keys": ("gateway.cli.admin_commands", "keys", "Create, list and revoke API keys."),
    "tenants": ("gateway.cli.admin_commands", "tenants", "List, enable and disable tenants."),
    "budgets": ("gateway.cli.budget_commands", "budgets", "Show and set budgets and limits."),
    "usage": ("gateway.cli.budget_commands", "usage", "A tenant's spend against its budgets."),
    "policy": ("gateway.cli.policy_commands", "policy",
               "Check, explain and replay routing policies."),
    "report": ("gateway.cli.report_html", "report",
               "Cost, savings, economics and audit reports."),
    "classify": ("gateway.cli.classify_command", "classify_command",
                 "Classify prompts (tokens, complexity, task, sensitivity)."),
    "router": ("gateway.cli.router_commands", "router",
               "Fit a router to your own judged outcomes, and evaluate it."),
    "classifier": ("gateway.cli.task_commands", "classifier",
                   "Train and evaluate the classifiers."),
    "audit": ("gateway.cli.audit_commands", "audit", "Verify, prune and repair the audit log."),
    "plan": ("gateway.cli.plan_command", "plan",
             "Size GPUs for a model: from flags, a catalogue, or recorded traffic."),
    "status": ("gateway.cli.status_command", "status",
               "Where state lives, the policy, database and Redis, the running gateway."),
}
DEBUG_ENV = "GATEWAY_DEBUG"  # set: a start-up or command error prints its traceback too


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = COMMANDS.get(cmd_name)
        if found is None:
            return None
        module, attribute, _ = found
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("0.1.0", prog_name="gateway")
@click.option("--home", type=click.Path(file_okay=False), default=None,
              help="the state folder (embedded database, admin key, audit spool); default: "
              "GATEWAY_HOME, else ./.gateway if it holds a database, else "
              "~/.local/share/gateway")
@click.option("--debug", is_flag=True, help="print the traceback behind an error")
def cli(home: str | None, debug: bool) -> None:
    """Multi-model LLM routing gateway: one OpenAI-compatible URL for every model."""
    from gateway.state_home import HOME_ENV, resolve

    # Through the environment, as every other setting: `serve`'s workers inherit it. Made
    # absolute, so what status and the error lines print can be pasted anywhere.
    if home is not None:
        os.environ[HOME_ENV] = os.path.abspath(os.path.expanduser(home))
    if debug:
        os.environ[DEBUG_ENV] = "1"
    notice = resolve().notice()
    if notice is not None:
        click.echo(notice, err=True)


def main() -> None:
    try:
        cli()
    except SetupError as exc:  # a missing file or unreachable service: one line, no traceback
        _debug_traceback()
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    except (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError) as exc:
        # A path given on the command line (or by a setting) that cannot be read or written.
        _debug_traceback()
        click.echo(f"Error: {exc.strerror}: {exc.filename}", err=True)
        sys.exit(2)


def _debug_traceback() -> None:
    if os.environ.get(DEBUG_ENV, "").lower() in ("1", "true", "yes"):
        traceback.print_exc()


if __name__ == "__main__":
    main()
