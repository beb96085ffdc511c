"""The page fetcher against real HTTP servers on loopback.

The servers are ``http.server`` instances in threads; the fetcher reaches them only
because their host names are in ``RESEARCH_FETCH_ALLOWED_HOSTS`` (loopback is refused
otherwise, which is itself under test). Where a test needs a *name* that resolves to
a private address, ``socket.getaddrinfo`` answers for that one invented name (this
machine has no DNS server to publish it in); every other name resolves for real.
"""

from __future__ import annotations

import asyncio
import email.utils
import http.server
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import trustme

from services.retrieval.fetch import (
    FetchedDocument,
    FetchFailed,
    FetchRefused,
    FetchUnavailable,
    check_address,
    extract_html,
    fetch_document,
)
from shared.settings import StageSettings
from shared.research.text import canonicalize, text_hash
from tests.fixtures.pdf import make_pdf

MIB = 1024 * 1024


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    stream_bytes: int = 0  # >0: stream this many bytes in 64 KiB chunks, no Content-Length
    declare_length: int | None = None  # a Content-Length to announce instead of the real one
    delay_s: float = 0.0


@dataclass
class Site:
    """A real HTTP server on 127.0.0.1 that answers paths from ``routes``."""

    routes: dict[str, Reply | Callable[[], Reply]]
    port: int = 0
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, Host header)
    bytes_sent: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _handler(site: Site) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # close-delimited bodies: streaming needs no chunking

        def do_GET(self) -> None:
            site.requests.append((self.path, self.headers.get("Host", "")))
            route = site.routes.get(self.path)
            reply = route() if callable(route) else route
            if reply is None:
                reply = Reply(status=404, body=b"not found", content_type="text/plain")
            if reply.delay_s:
                time.sleep(reply.delay_s)
            self.send_response(reply.status)
            if reply.content_type is not None:
                self.send_header("Content-Type", reply.content_type)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.declare_length is not None:
                self.send_header("Content-Length", str(reply.declare_length))
            elif not reply.stream_bytes:
                self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            try:
                if reply.stream_bytes:
                    chunk = b"<p>" + b"x" * (64 * 1024 - 7) + b"</p>\n"
                    while site.bytes_sent < reply.stream_bytes:
                        self.wfile.write(chunk)
                        site.bytes_sent += len(chunk)
                else:
                    self.wfile.write(reply.body)
                    site.bytes_sent += len(reply.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the fetcher hung up: that is what the size-cap test wants

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site(routes={})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(s))
    server.daemon_threads = True
    s.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield s
    finally:
        server.shutdown()
        server.server_close()


def settings(allowed: str = "127.0.0.1,localhost", **overrides: object) -> StageSettings:
    return StageSettings(research_fetch_allowed_hosts=allowed, **overrides)


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Names added to the returned dict resolve to the given address; others for real."""
    names: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(host, bytes):
            host = host.decode()
        if host in names:
            return real(names[host], port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names


ARTICLE = """<!doctype html><html><head><title>How Tides Work</title>
<meta name="viewport" content="width=device-width"></head><body>
<header>SITEHEADER menu</header><nav>NAVLINKS</nav>
<div class="layout"><aside>SIDEBAR ads</aside>
<article><h1>How tides work</h1>
<p>Tides are the rise and fall of sea levels caused by the Moon's gravity.</p>
<p>Spring tides happen when the Sun and Moon align.</p></article>
<article><p>RELATED short teaser.</p></article></div>
<footer>COPYRIGHT notice</footer><script>track("SCRIPT")</script></body></html>"""


# -- the SSRF guard -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://127.8.9.10:8080/admin", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://[::ffff:169.254.169.254]/", "link-local"),
        ("http://[64:ff9b::a00:1]/", "private"),
        ("http://10.0.0.1/", "private"),
        ("http://192.168.1.1/", "private"),
        ("http://172.16.0.1/", "private"),
        ("http://[fd00::1]/", "private"),
        ("http://[fe80::1]/", "link-local"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://224.0.0.1/", "multicast"),
        ("http://100.64.0.1/", "non-public"),
        ("http://localhost/", "loopback"),
    ],
)
async def test_refuses_non_public_addresses(url: str, reason: str) -> None:
    with pytest.raises(FetchRefused, match=reason):
        await fetch_document(url, settings(allowed=""))


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://ftp.example.org/file.txt", "gopher://example.org/", "data:text/html,hi",
            "javascript:alert(1)", "//example.org/no-scheme", "http:///no-host"],
)
async def test_refuses_other_schemes_and_hostless_urls(url: str) -> None:
    with pytest.raises(FetchRefused):
        await fetch_document(url, settings(allowed=""))


async def test_hostname_resolving_to_private_address_is_refused(fake_dns: dict[str, str], site: Site) -> None:
    fake_dns["intranet.example"] = "10.20.30.40"
    with pytest.raises(FetchRefused, match=r"'intranet.example'.*private address 10\.20\.30\.40"):
        await fetch_document("https://intranet.example/payroll", settings(allowed=""))
    # A name that resolves to loopback, with the port of a live server: refused before
    # any connection, so the server never sees a request.
    fake_dns["sneaky.example"] = "127.0.0.1"
    site.routes["/"] = Reply(body=b"<p>secret</p>")
    with pytest.raises(FetchRefused, match="loopback"):
        await fetch_document(f"http://sneaky.example:{site.port}/", settings(allowed=""))
    assert site.requests == []


async def test_redirect_to_private_address_is_refused(site: Site) -> None:
    site.routes["/to-metadata"] = Reply(status=302, headers={"Location": "http://169.254.169.254/latest/"})
    site.routes["/to-private"] = Reply(status=301, headers={"Location": "http://10.0.0.7/admin"})
    site.routes["/to-localhost"] = Reply(status=307, headers={"Location": f"http://localhost:{site.port}/x"})
    site.routes["/to-file"] = Reply(status=302, headers={"Location": "file:///etc/passwd"})
    site.routes["/x"] = Reply(body=b"<p>internal</p>")
    only_ip = settings(allowed="127.0.0.1")
    with pytest.raises(FetchRefused, match="link-local address 169.254.169.254"):
        await fetch_document(f"{site.base}/to-metadata", only_ip)
    with pytest.raises(FetchRefused, match="private address 10.0.0.7"):
        await fetch_document(f"{site.base}/to-private", only_ip)
    # The redirect target is checked on its own: 127.0.0.1 is allowed, "localhost" is not.
    with pytest.raises(FetchRefused, match="'localhost'.*loopback"):
        await fetch_document(f"{site.base}/to-localhost", only_ip)
    with pytest.raises(FetchRefused, match="only http and https"):
        await fetch_document(f"{site.base}/to-file", only_ip)
    assert "/x" not in [path for path, _host in site.requests]


async def test_redirects_are_followed_and_bounded(site: Site) -> None:
    site.routes["/a"] = Reply(status=301, headers={"Location": "/b?utm_source=x"})
    site.routes["/b?utm_source=x"] = Reply(status=302, headers={"Location": f"http://localhost:{site.port}/final"})
    site.routes["/final"] = Reply(body=b"<html><body><p>Arrived safely.</p></body></html>")
    doc = await fetch_document(f"{site.base}/a", settings())
    assert doc.text == "Arrived safely."
    assert doc.url == f"{site.base}/a"
    assert doc.final_url == f"http://localhost:{site.port}/final"

    for n in range(10):
        site.routes[f"/loop{n}"] = Reply(status=302, headers={"Location": f"/loop{n + 1}"})
    with pytest.raises(FetchRefused, match="more than 3 redirects"):
        await fetch_document(f"{site.base}/loop0", settings(research_fetch_max_redirects=3))


async def test_connection_is_pinned_to_the_checked_address(fake_dns: dict[str, str], site: Site) -> None:
    """The HTTP stack never resolves the name again (no DNS-rebinding window): the
    request goes to the address that was checked, with the name in the Host header."""
    fake_dns["pinned.example"] = "127.0.0.1"
    site.routes["/page"] = Reply(body=b"<p>Pinned page text.</p>")
    resolved: list[str] = []
    real = socket.getaddrinfo

    def counting(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        resolved.append(host.decode() if isinstance(host, bytes) else host)
        return real(host, *args, **kwargs)

    socket.getaddrinfo = counting  # restored by fake_dns's monkeypatch
    doc = await fetch_document(f"http://pinned.example:{site.port}/page", settings(allowed="pinned.example"))
    assert doc.text == "Pinned page text."
    assert site.requests == [("/page", f"pinned.example:{site.port}")]
    assert resolved.count("pinned.example") == 1


@pytest.mark.parametrize(
    ("ip", "ok"),
    [("93.184.216.34", True), ("2606:4700::1111", True), ("8.8.8.8", True), ("::ffff:8.8.8.8", True),
     ("192.0.2.1", False), ("2001:db8::1", False), ("2002:a00:1::", False), ("::", False), ("ff02::1", False)],
)
def test_check_address(ip: str, ok: bool) -> None:
    import ipaddress

    assert (check_address(ipaddress.ip_address(ip)) is None) is ok


# -- size, time, status, type --------------------------------------------------------------


async def test_50_mb_page_is_refused_while_streaming(site: Site) -> None:
    site.routes["/huge"] = Reply(stream_bytes=50 * MIB)
    started = time.monotonic()
    with pytest.raises(FetchRefused, match=f"over the {10 * MIB}-byte limit"):
        await fetch_document(f"{site.base}/huge", settings())
    # The fetcher hung up near the cap instead of reading 50 MB (socket buffers let a
    # few MB more leave the server before it notices).
    await asyncio.sleep(0.2)
    assert site.bytes_sent < 30 * MIB, site.bytes_sent
    assert time.monotonic() - started < 15


async def test_declared_oversize_is_refused_before_reading(site: Site) -> None:
    site.routes["/declared"] = Reply(body=b"<p>small</p>", declare_length=50 * MIB)
    with pytest.raises(FetchRefused, match=f"{50 * MIB} bytes is over the {MIB}-byte limit"):
        await fetch_document(f"{site.base}/declared", settings(research_fetch_max_bytes=MIB))


@pytest.mark.parametrize(
    "content_type", ["application/octet-stream", "image/png", "application/json", "video/mp4", "text/css"]
)
async def test_content_type_refused(site: Site, content_type: str) -> None:
    site.routes["/file"] = Reply(body=b"\x89PNG....", content_type=content_type)
    with pytest.raises(FetchRefused, match=f"content type '{content_type}' is not fetched"):
        await fetch_document(f"{site.base}/file", settings())


async def test_missing_content_type_is_sniffed(site: Site) -> None:
    site.routes["/html"] = Reply(body=b"<!DOCTYPE html><html><body><p>Sniffed.</p></body></html>", content_type=None)
    site.routes["/pdf"] = Reply(body=make_pdf([["Sniffed PDF."]]), content_type=None)
    site.routes["/bin"] = Reply(body=b"\x00\x01\x02", content_type=None)
    assert (await fetch_document(f"{site.base}/html", settings())).content_type == "text/html"
    assert (await fetch_document(f"{site.base}/pdf", settings())).text == "Sniffed PDF."
    with pytest.raises(FetchRefused, match="neither HTML nor PDF"):
        await fetch_document(f"{site.base}/bin", settings())


async def test_status_errors(site: Site) -> None:
    site.routes["/gone"] = Reply(status=410, body=b"gone")
    site.routes["/busy"] = Reply(status=503, body=b"busy", headers={"Retry-After": "7"})
    site.routes["/limited"] = Reply(status=429, body=b"slow down")
    with pytest.raises(FetchFailed, match="HTTP 410"):
        await fetch_document(f"{site.base}/gone", settings())
    with pytest.raises(FetchFailed, match="HTTP 404"):
        await fetch_document(f"{site.base}/missing", settings())
    with pytest.raises(FetchUnavailable, match="HTTP 503") as busy:
        await fetch_document(f"{site.base}/busy", settings())
    assert busy.value.retry_after_s == 7.0
    with pytest.raises(FetchUnavailable, match="HTTP 429"):
        await fetch_document(f"{site.base}/limited", settings())


async def test_retry_after_as_an_http_date(site: Site) -> None:
    later = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    site.routes["/busy"] = Reply(status=503, body=b"busy", headers={"Retry-After": later})
    with pytest.raises(FetchUnavailable, match="HTTP 503") as busy:
        await fetch_document(f"{site.base}/busy", settings())
    assert busy.value.retry_after_s is not None and 100.0 <= busy.value.retry_after_s <= 120.0


async def test_timeout_is_transient(site: Site) -> None:
    site.routes["/slow"] = Reply(body=b"<p>late</p>", delay_s=2.0)
    with pytest.raises(FetchUnavailable, match="(took longer|timed out)"):
        await fetch_document(f"{site.base}/slow", settings(research_fetch_timeout_s=0.3))


async def test_connection_refused_is_transient() -> None:
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(FetchUnavailable):
        await fetch_document(f"http://127.0.0.1:{port}/", settings())


# -- extraction ---------------------------------------------------------------------------


async def test_html_main_content_extraction(site: Site) -> None:
    site.routes["/tides"] = Reply(body=ARTICLE.encode())
    doc = await fetch_document(f"{site.base}/tides", settings())
    assert isinstance(doc, FetchedDocument)
    assert doc.title == "How Tides Work"
    assert doc.text == (
        "# How tides work\n\n"
        "Tides are the rise and fall of sea levels caused by the Moon's gravity.\n\n"
        "Spring tides happen when the Sun and Moon align."
    )
    for marker in ("SITEHEADER", "NAVLINKS", "SIDEBAR", "RELATED", "COPYRIGHT", "SCRIPT"):
        assert marker not in doc.text
    assert doc.text == canonicalize(doc.text)  # canonical: locators index into it
    assert doc.text_hash == text_hash(doc.text)
    assert doc.content_type == "text/html" and doc.page_starts is None
    assert doc.bytes_read == len(ARTICLE.encode())


def test_extract_html_prefers_main_and_falls_back() -> None:
    title, text = extract_html(
        "<html><body><div>OUTSIDE</div><main><p>Inside main.</p></main><article>ART</article></body></html>"
    )
    assert (title, canonicalize(text)) == (None, "Inside main.")
    _, text = extract_html("<html><body><main></main><p>Only body text.</p></body></html>")
    assert canonicalize(text) == "Only body text."
    _, text = extract_html("<html><body><div role='main'><p>Role main.</p></div><p>NOT</p></body></html>")
    assert canonicalize(text) == "Role main."


async def test_charsets(site: Site) -> None:
    latin = "<html><head><meta charset='iso-8859-1'></head><body><p>Caf\u00e9 cr\u00e8me.</p></body></html>"
    site.routes["/meta"] = Reply(body=latin.encode("latin-1"), content_type="text/html")
    site.routes["/header"] = Reply(body="Na\u00efve text.".encode("cp1252"), content_type="text/plain; charset=windows-1252")
    assert (await fetch_document(f"{site.base}/meta", settings())).text == "Caf\u00e9 cr\u00e8me."
    plain = await fetch_document(f"{site.base}/header", settings())
    assert plain.text == "Na\u00efve text." and plain.content_type == "text/plain"
    assert plain.title == "header"  # no title in plain text: the URL's last segment


async def test_pdf_text_and_page_starts(site: Site) -> None:
    pages = [
        ["Chapter one: the Moon pulls the oceans.", "Two bulges of water form."],
        ["Chapter two: spring tides and neap tides."],
        [],
        ["Appendix: tide tables (with parentheses) and back\\slashes."],
    ]
    site.routes["/paper.pdf"] = Reply(body=make_pdf(pages, title="Tide Physics"), content_type="application/pdf")
    doc = await fetch_document(f"{site.base}/paper.pdf", settings())
    assert doc.title == "Tide Physics"
    assert doc.content_type == "application/pdf"
    assert doc.text == canonicalize(doc.text)
    starts = doc.page_starts
    assert starts is not None and len(starts) == 4
    bounds = [*starts, len(doc.text)]
    page_text = [doc.text[bounds[i] : bounds[i + 1]].strip() for i in range(4)]
    assert page_text == [
        "Chapter one: the Moon pulls the oceans.\nTwo bulges of water form.",
        "Chapter two: spring tides and neap tides.",
        "",
        "Appendix: tide tables (with parentheses) and back\\slashes.",
    ]
    # A locator built from page_starts finds the quote: page 4, chars 10..21 of the page.
    assert doc.text[starts[3] + 10 : starts[3] + 21] == "tide tables"


async def test_broken_pdf_fails_clearly(site: Site) -> None:
    site.routes["/broken.pdf"] = Reply(body=b"%PDF-1.4\nthis is not really a pdf", content_type="application/pdf")
    site.routes["/empty.pdf"] = Reply(body=make_pdf([[], []]), content_type="application/pdf")
    with pytest.raises(FetchFailed, match="not a readable PDF"):
        await fetch_document(f"{site.base}/broken.pdf", settings())
    with pytest.raises(FetchFailed, match="no extractable text"):
        await fetch_document(f"{site.base}/empty.pdf", settings())


async def test_empty_page_fails(site: Site) -> None:
    site.routes["/blank"] = Reply(body=b"<html><body><script>x()</script></body></html>")
    with pytest.raises(FetchFailed, match="no text after extraction"):
        await fetch_document(f"{site.base}/blank", settings())


# -- HTTPS through the pinned address -------------------------------------------------------


@pytest.fixture
def tls_site(site: Site) -> Iterator[tuple[Site, trustme.CA]]:
    """``site`` again, over TLS, with a certificate for ``secure.example`` only."""
    ca = trustme.CA()
    cert = ca.issue_cert("secure.example")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
    server.daemon_threads = True
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    site.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield site, ca
    finally:
        server.shutdown()
        server.server_close()


async def test_https_is_pinned_with_sni_and_verified_against_the_name(
    fake_dns: dict[str, str], tls_site: tuple[Site, trustme.CA]
) -> None:
    """The connection goes to the checked IP, yet TLS still names and verifies the host:
    the certificate is for secure.example and no other name, so the handshake succeeds
    only if SNI and hostname verification use the name, not the IP."""
    site, ca = tls_site
    fake_dns["secure.example"] = "127.0.0.1"
    fake_dns["other.example"] = "127.0.0.1"
    site.routes["/doc"] = Reply(body=b"<p>Served over TLS.</p>")
    allowed = settings(allowed="secure.example,other.example")
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    async with httpx.AsyncClient(verify=trust, follow_redirects=False, trust_env=False) as client:
        doc = await fetch_document(f"https://secure.example:{site.port}/doc", allowed, client=client)
        assert doc.text == "Served over TLS."
        assert site.requests == [("/doc", f"secure.example:{site.port}")]
        # A name the certificate does not cover fails verification: a transport error.
        with pytest.raises(FetchUnavailable, match="ConnectError"):
            await fetch_document(f"https://other.example:{site.port}/doc", allowed, client=client)
