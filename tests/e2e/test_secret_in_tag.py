"""A bare AWS secret access key sent as a tag (no "aws" or "secret" beside it, as tags are
short) reaches the audit record masked."""

from __future__ import annotations

import time

from tests.e2e.conftest import Gateway
from tests.support.audit_mirror import mirror_rows

KEY = "Zq3v8Lr1Tx9Kp0Wm4Hs7Bn2Yc6Jd5Fg1Ae8Ui0Ox"  # 40 random characters, no context


def test_a_bare_secret_key_in_a_tag_is_masked_in_the_audit_record(gw: Gateway) -> None:
    with gw.client(default_headers={"x-gateway-tags": f"team-a,{KEY}"}) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="auto", max_tokens=4, messages=[{"role": "user", "content": "hi"}])
    request_id = raw.headers["x-request-id"]
    deadline = time.monotonic() + 10
    while not (rows := [r for r in mirror_rows(gw.audit_path)
                        if r.get("request_id") == request_id]):
        assert time.monotonic() < deadline, "not audited"
        time.sleep(0.05)
    tags = str(rows[0]["tags"])
    assert KEY not in tags and "[SECRET_1]" in tags, tags
