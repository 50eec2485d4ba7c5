"""Policy replay counts a sensitive request sent to an external backend approved for its
categories (`approved_for`) as no leak; without the approval, the same route is one."""

from __future__ import annotations

from gateway.policy.loader import parse_policy
from tests.support.replay_policies import BACKENDS
from tests.unit.offline.replay.test_replay import replay, row, unchecked

RULES = """\
rules:
  - name: other-sensitive-home
    when: {sensitivity: [secret, phi]}
    allow_zones: [self_hosted]
  - name: pii-to-dpa
    when: {sensitivity: [pii]}
    backends: [frontier]
"""
APPROVED = BACKENDS.replace(
    "    zone: external\n",
    "    zone: external\n    approved_for: [pii]\n    approval: DPA-2026-03\n") + RULES


def test_an_approved_route_is_no_leak_and_an_unapproved_one_is() -> None:
    pii = [row(sensitivity=("pii",), sensitive_types=("email",))]
    report = replay(parse_policy(APPROVED), pii)
    assert report.sensitive == 1 and report.leaks == ()
    unapproved = replay(unchecked(BACKENDS + RULES), pii)
    assert [leak.backend for leak in unapproved.leaks] == ["frontier"]
