"""The transport's URLs built from a known origin's parts are the URLs yarl would parse."""

from __future__ import annotations

import string

import yarl
from hypothesis import given
from hypothesis import strategies as st

from asyncsports._http.config import Settings
from asyncsports._http.transports.aiohttp import AiohttpTransport, origin

_SAFE = string.ascii_letters + string.digits + "-._~%!$&'()*+,;=:@"
segment = st.text(_SAFE, max_size=12)
hosts = st.sampled_from(
    ["127.0.0.1:8123", "h", "host.example", "[::1]:80", "u:p@h:1", "h:1", "h:10"]
)
targets = st.builds(
    lambda parts, q, frag: "/" + "/".join(parts) + (f"?{q}" if q is not None else "") + frag,
    st.lists(segment, max_size=4),
    st.none() | st.text(_SAFE + "/?", max_size=20),
    st.sampled_from(["", "#f"]),
)


@given(st.sampled_from(["http", "https"]), st.lists(st.tuples(hosts, targets), min_size=1))
def test_built_urls_equal_parsed_ones(scheme: str, urls: list[tuple[str, str]]) -> None:
    net = AiohttpTransport(Settings(base_url="http://h"))
    for host, target in urls:  # origins change and come back: the cached one is re-taken
        url = f"{scheme}://{host}{target}"
        built, parsed = net._url(url), yarl.URL(url, encoded=True)
        assert (built, str(built)) == (parsed, str(parsed)), url


def test_origin_of_urls() -> None:
    assert origin("http://h:1/p?q") == ("http://h:1", "http", "h:1")
    assert origin("https://h") == ("", "", "")  # no path: parsed whole
    assert origin("/relative") == ("", "", "")
    # h:1 is not the origin of h:10, though its prefix: the next character must be "/".
    net = AiohttpTransport(Settings(base_url="http://h"))
    assert net._url("http://h:1/a").port == 1
    assert net._url("http://h:10/a").port == 10
