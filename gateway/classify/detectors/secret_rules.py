"""Credential formats with a recognisable prefix or shape, one rule per provider format.

Written from the providers' published token formats. Each rule names the literal prefixes a
token must start with (the scanner only tries the rules whose prefix is present), the full
pattern, and the entropy the variable part needs (0 = the format alone is enough).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TokenRule:
    name: str  # becomes the span type "secret.<name>"
    prefixes: tuple[str, ...]  # literal starts; empty for rules found by shape
    pattern: re.Pattern[str]
    min_entropy: float = 3.0
    check_placeholder: bool = True
    hint: str = ""  # for shape rules: a literal the token (or the 3 chars after it) must hold


def _rule(name: str, prefixes: str, pattern: str, min_entropy: float = 3.0,
          check_placeholder: bool = True, hint: str = "") -> TokenRule:
    # The right edge: the token ends (no further token character follows).
    compiled = re.compile(pattern + r"(?![\w+/=~-])")
    return TokenRule(name, tuple(prefixes.split()), compiled, min_entropy, check_placeholder,
                     hint)


_B64 = r"[A-Za-z0-9+/]"
RULES: tuple[TokenRule, ...] = (
    _rule("aws_access_key", "AKIA ASIA ABIA ACCA A3T", r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])"
          r"[A-Z2-7]{16}", 2.5),
    _rule("aws_bedrock_key", "ABSK", r"ABSK[A-Za-z0-9+/]{109,269}={0,2}", 3.0, False),
    _rule("gcp_api_key", "AIza", r"AIza[\w-]{35}", 3.5),
    _rule("github_token", "ghp_ gho_ ghu_ ghs_ ghr_", r"gh[pousr]_[A-Za-z0-9]{36}", 3.0),
    _rule("github_token", "github_pat_", r"github_pat_\w{82}", 3.0),
    _rule("gitlab_token", "glpat- gldt- glrt- glcbt- glft- glffct-",
          r"gl(?:pat|dt|rt|cbt|ft|ffct)-[\w-]{20}(?:\.[\w.-]{6,})?", 3.0),
    _rule("gitlab_token", "glsoat-", r"glsoat-[\w-]{20,50}", 3.0),
    _rule("gitlab_token", "glimt-", r"glimt-[\w-]{25}", 3.0),
    _rule("gitlab_token", "glptt-", r"glptt-[\w-]{40}", 3.0),
    _rule("gitlab_token", "gloas-", r"gloas-[\w-]{64}", 3.0),
    _rule("gitlab_token", "glagent-", r"glagent-[\w-]{50,}", 3.0),
    _rule("gitlab_token", "GR1348941", r"GR1348941[\w-]{20,50}", 3.0),
    _rule("grafana_token", "glc_", r"glc_[A-Za-z0-9+/]{32,400}={0,2}", 3.0),
    _rule("grafana_token", "glsa_", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", 3.0),
    _rule("slack_token", "xoxb- xoxp- xoxa- xoxr- xoxs- xoxo-",
          r"xox[bpars]-\d{8,14}-\d{8,14}(?:-\d{8,14})?-[A-Za-z0-9]{24,34}", 3.0),
    _rule("slack_token", "xoxe.xox xoxe-", r"xoxe(?:\.xox[bp])?-\d-[A-Z0-9]{140,170}", 3.0),
    _rule("slack_token", "xapp-", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{40,}", 3.0),
    _rule("slack_webhook", "hooks.slack.com/",
          r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}", 3.0),
    _rule("stripe_key", "sk_live_ sk_test_ rk_live_ rk_test_", r"[rs]k_(?:live|test)_[0-9A-Za-z]"
          r"{10,99}", 3.0),
    _rule("anthropic_key", "sk-ant-", r"sk-ant-(?:api03|admin01)-[\w-]{93}AA", 3.0),
    _rule("openai_key", "sk-", r"sk-(?:(?:proj|svcacct|admin)-)?[\w-]{16,}T3BlbkFJ[\w-]{16,}", 3.0),
    _rule("openai_key", "sk-proj- sk-svcacct- sk-admin-",
          r"sk-(?:proj|svcacct|admin)-[\w-]{80,}", 3.5),
    _rule("huggingface_token", "hf_", r"hf_[A-Za-z]{34}", 3.5),
    _rule("huggingface_token", "api_org_", r"api_org_[A-Za-z]{34}", 3.5),
    _rule("npm_token", "npm_", r"npm_[A-Za-z0-9]{36}", 3.0),
    _rule("pypi_token", "pypi-Ag", r"pypi-AgE[A-Za-z0-9_-]{100,}", 3.0),
    _rule("sendgrid_key", "SG.", r"SG\.[\w-]{22}\.[\w-]{43}", 3.0),
    _rule("mailchimp_key", "", r"(?<![\w-])[0-9a-f]{32}-us\d{1,2}", 3.0, hint="-us"),
    _rule("mailgun_key", "key-", r"key-[0-9a-f]{32}", 3.0),
    _rule("twilio_key", "AC SK", r"(?:AC|SK)[0-9a-f]{32}", 3.0),
    _rule("telegram_bot_token", "", r"(?<![\w:])\d{8,10}:AA[\w-]{32,33}", 3.0, hint=":AA"),
    _rule("discord_token", "", r"[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27,38}", 3.0, hint="."),
    _rule("facebook_token", "EAAM EAAC EAAG", r"EAA[MCG][A-Za-z0-9]{80,}", 3.5),
    _rule("facebook_token", "", r"(?<!\d)\d{15,16}\|[\w-]{27}", 3.0, hint="|"),
    _rule("artifactory_key", "AKCp", r"AKCp[A-Za-z0-9]{69}", 4.0),
    _rule("artifactory_key", "cmVmd", r"cmVmd[A-Za-z0-9]{59}", 4.0),
    _rule("artifactory_key", "AKC AP", r"(?<![\w-])(?:AKC[a-zA-Z0-9]{10,}|AP[\dABCDEF][a-zA-Z0-9]"
          r"{8,})", 3.2),
    _rule("azure_storage_key", "AccountKey=", r"AccountKey=" + _B64 + r"{86,88}={0,2}", 4.0),
    _rule("azure_client_secret", "", r"(?<![\w~.-])[\w~.]{3}\dQ~[\w~.-]{31,34}", 3.0,
          hint="Q~"),
    _rule("databricks_token", "dapi", r"dapi[a-f0-9]{32}(?:-\d)?", 3.0),
    _rule("digitalocean_token", "dop_v1_ doo_v1_ dor_v1_", r"do[opr]_v1_[a-f0-9]{64}", 3.0),
    _rule("shopify_token", "shpat_ shpca_ shppa_ shpss_", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
          3.0),
    _rule("notion_token", "ntn_ secret_", r"(?:ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})",
          3.5),
    _rule("sourcegraph_token", "sgp_", r"sgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}", 3.0),
    _rule("intra42_secret", "s-s4t2", r"s-s4t2(?:ud|af)-[a-f0-9]{64}", 3.0),
    _rule("octopus_key", "API-", r"(?<![\w-])API-[A-Z0-9]{26}", 3.0),
    _rule("vault_token", "hvs. hvb.", r"hv[sb]\.[\w-]{90,}", 3.5),
    _rule("onepassword_token", "ops_eyJ", r"ops_eyJ[a-zA-Z0-9+/]{250,}={0,3}", 4.0),
    _rule("onepassword_key", "A3-", r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"
          r"-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}", 3.5),
    _rule("age_secret_key", "AGE-SECRET-KEY-1",
          r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", 0.0),
    _rule("square_token", "sq0atp- sq0csp- EAAA", r"(?:sq0atp-[\w-]{22}|sq0csp-[\w-]{43}|EAAA[\w-]"
          r"{60})", 3.0),
    _rule("postman_key", "PMAK-", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", 3.0),
    _rule("google_oauth_token", "ya29.", r"ya29\.[\w-]{30,}", 3.5),
    _rule("linear_key", "lin_api_", r"lin_api_[A-Za-z0-9]{40}", 3.5),
    _rule("planetscale_token", "pscale_tkn_ pscale_pw_", r"pscale_(?:tkn|pw)_[\w.-]{32,64}", 3.5),
    _rule("doppler_token", "dp.pt.", r"dp\.pt\.[A-Za-z0-9]{43}", 3.5),
    _rule("perplexity_key", "pplx-", r"pplx-[A-Za-z0-9]{48}", 3.5),
    _rule("groq_key", "gsk_", r"gsk_[A-Za-z0-9]{52}", 3.5),
)



def _by_prefix(rules: tuple[TokenRule, ...]) -> dict[str, tuple[TokenRule, ...]]:
    index: dict[str, tuple[TokenRule, ...]] = {}
    for rule in rules:
        for prefix in rule.prefixes:
            index[prefix] = (*index.get(prefix, ()), rule)
    return index


# Rules found by shape rather than prefix: tried on every candidate token holding their hint.
SHAPE_RULES: tuple[TokenRule, ...] = tuple(r for r in RULES if not r.prefixes)
PREFIX_RULES: dict[str, tuple[TokenRule, ...]] = _by_prefix(RULES)
PREFIXES: tuple[str, ...] = tuple(sorted(PREFIX_RULES, key=len, reverse=True))
PREFIX_LENGTHS: tuple[int, ...] = tuple(sorted({len(p) for p in PREFIX_RULES}, reverse=True))
PREFIX_HEADS: frozenset[str] = frozenset(p[:2] for p in PREFIX_RULES)
