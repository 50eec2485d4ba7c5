"""IP address literals: every written form of a public IPv6 or IPv4 address is found whole,
documentation addresses are masked stand-ins, and code's "::" and version numbers are not
addresses."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gateway.classify.detectors.validators import ip_kind
from gateway.classify.sensitivity import SensitivityScanner

SCANNER = SensitivityScanner()


def routed(text: str) -> list[str]:
    return [text[s.start:s.end] for s in SCANNER.scan(text) if s.type == "ip_address"]


def stand_ins(text: str) -> list[str]:
    return [text[s.start:s.end] for s in SCANNER.scan_for_redaction(text)
            if s.type == "ip_address" and s.reserved]


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("peer ::ffff:8.8.4.4 connected", "::ffff:8.8.4.4"),  # IPv4-mapped
        ("peer ::ffff:0:8.8.4.4 connected", "::ffff:0:8.8.4.4"),  # IPv4-translated
        ("peer 0:0:0:0:0:ffff:8.8.4.4", "0:0:0:0:0:ffff:8.8.4.4"),
        ("the host 2a00::1 answered", "2a00::1"),  # two groups around "::"
        ("fetch http://[2a00::1]/index.html", "2a00::1"),
        ("ssh admin@2a00::1 -p 22", "2a00::1"),
        ("link 2a00:1450:4001:82a::200e%eth0 is up", "2a00:1450:4001:82a::200e%eth0"),
        ("block 2a00:1450::/32 at the edge", "2a00:1450::/32"),
        ("block 2a00:1450::/32.", "2a00:1450::/32"),
        ("IPv6 2a00:1450::2: unreachable", "2a00:1450::2"),
        ("IPv6:2a00:1450::1 is up", "2a00:1450::1"),  # a label glued on by its colon
        ("id:2001:4860::8888", "2001:4860::8888"),
    ],
)
def test_written_forms_of_a_public_ipv6_address_are_found_whole(text: str,
                                                                address: str) -> None:
    assert routed(text) == [address]


@pytest.mark.parametrize(
    "text",
    ["peer ::ffff:10.0.0.1", "peer ::ffff:0:192.168.1.1", "nat 64:ff9b::10.1.2.3",
     "loopback ::1", "unspecified ::", "link fe80::1%eth0", "std::cout << x", "a[1::2]",
     "Foo::Bar::baz()", "d::c", "dead::beef", "at 12:34:56", "text2a00:1450::1", "text2001:db8::1",
     "foo2001:db8::10.0.0.1", "text2a00:1450:4001::1",
     "2a00:1450::1text", "mac aa:bb:cc:dd:ee:ff"],
)
def test_internal_addresses_and_code_are_not_routed(text: str) -> None:
    assert routed(text) == []


@pytest.mark.parametrize(
    ("text", "address"),
    [("resolver 2001:db8::53 is down", "2001:db8::53"),
     ("connect to [2001:db8::1]:8080", "2001:db8::1"),
     ("NAT64 64:ff9b::198.51.100.1", "64:ff9b::198.51.100.1"),
     ("server 192.0.2.7 is down", "192.0.2.7"),
     ("from 203.0.113.50, port 22", "203.0.113.50"),
     ("the 3fff::1 example", "3fff::1")],
)
def test_documentation_addresses_are_masked_stand_ins(text: str, address: str) -> None:
    assert routed(text) == []
    assert stand_ins(text) == [address]


@pytest.mark.parametrize(
    "text",
    ["upgrade to version: 1.2.3.4", "pip install foo==1.2.3.4", "Build 4.3.2.1 ships",
     "firmware 2.2.2.2 fixes it", "release=5.6.7.8", "pin >=1.2.3.4"],
)
def test_four_part_version_numbers_are_not_addresses(text: str) -> None:
    assert routed(text) == []


@pytest.mark.parametrize(("text", "address"),
                         [("Oliver 4.3.2.1 logged in", "4.3.2.1"),
                          ("the server 8.8.4.4 replied", "8.8.4.4")])
def test_a_word_ending_in_ver_is_not_a_version_cue(text: str, address: str) -> None:
    assert routed(text) == [address]


def test_ip_kind_judges_an_embedded_ipv4_address() -> None:
    assert ip_kind("::ffff:8.8.8.8") == "public"
    assert ip_kind("::ffff:10.0.0.1") is None
    assert ip_kind("64:ff9b::10.1.2.3") is None
    assert ip_kind("64:ff9b::192.0.2.1") == "documentation"
    assert ip_kind("::8.8.8.8") == "public"
    assert ip_kind("::1") is None and ip_kind("::") is None


global_v6 = st.integers(0x2000 << 112, (0x4000 << 112) - 1).map(ipaddress.IPv6Address)
# 11.0.0.0-99.255.255.255 holds no private, shared, loopback or reserved block
public_v4 = st.integers(11 << 24, (100 << 24) - 1).map(ipaddress.IPv4Address)


@st.composite
def v6_forms(draw: st.DrawFn) -> tuple[str, str]:
    address = draw(global_v6)
    assume(ip_kind(str(address)) == "public")
    literal = draw(st.sampled_from([str(address), address.exploded]))
    template = draw(st.sampled_from(["{a}", "[{a}]:443", "http://[{a}]/x", "{a}/48",
                                     "{a}.", "({a})", "'{a}'", "host={a},"]))
    return template.format(a=literal), literal


@settings(max_examples=300, deadline=None)
@given(v6_forms(), st.sampled_from(["", "Server IP: ", "see ", "Ping "]))
def test_any_public_ipv6_address_in_any_form_is_found(form: tuple[str, str],
                                                      before: str) -> None:
    written, literal = form
    text = f"{before}{written} now"
    start = text.index(literal)
    assert any(s.type == "ip_address" and s.start == start and s.end >= start + len(literal)
               for s in SCANNER.scan(text))


@settings(max_examples=300, deadline=None)
@given(public_v4, st.sampled_from([("::ffff:{a}", "::ffff:{a}"), ("{a}", "{a}"),
                                   ("{a}/24", "{a}"), ("[::ffff:{a}]:80", "::ffff:{a}")]))
def test_any_public_ipv4_address_alone_or_mapped_is_found(address: ipaddress.IPv4Address,
                                                          form: tuple[str, str]) -> None:
    assume(ip_kind(str(address)) == "public")
    written, literal = (part.format(a=address) for part in form)
    text = f"client {written} said hi"
    start = text.index(literal)
    assert any(s.type == "ip_address" and s.start == start and s.end >= start + len(literal)
               for s in SCANNER.scan(text))
