"""Fetch one web page or PDF safely and turn it into canonical text.

Used for search results that came without full text, and for PDFs. A URL comes from a
search engine, i.e. from whoever wrote the page, so the fetcher treats it as hostile:

* **Schemes**: only ``http`` and ``https``; ``file://``, ``ftp://``, ``gopher://``...
  are refused before anything is resolved.
* **Addresses** (SSRF): the host is resolved (``getaddrinfo`` in a worker thread) and
  refused if *any* of its addresses is not a public unicast address: loopback,
  private (RFC 1918, ULA), link-local (including the 169.254.169.254 cloud metadata
  endpoint), multicast, reserved, unspecified, shared (CGNAT), documentation ranges,
  and IPv6 forms that embed such an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``,
  NAT64 ``64:ff9b::/96``, 6to4, Teredo). The check is repeated on every redirect,
  which the fetcher follows itself (at most ``RESEARCH_FETCH_MAX_REDIRECTS``).
* **DNS rebinding**: the request is sent to the address that was checked, not to the
  name again: the URL's host is replaced by that IP, the ``Host`` header keeps the
  name, and for HTTPS the ``sni_hostname`` request extension makes httpcore send the
  name as SNI and verify the certificate against it. A second lookup by the HTTP
  stack, which could answer differently, never happens. Proxies from the environment
  are ignored (``trust_env=False``): a proxy would resolve the name itself.
* **Allowed hosts**: names in ``RESEARCH_FETCH_ALLOWED_HOSTS`` skip the address check
  (tests, intranets); they are still pinned to the address they resolved to.
* **Size**: ``Content-Length`` over ``RESEARCH_FETCH_MAX_BYTES`` is refused before the
  body is read, and the body is counted while streaming (after content decoding, so a
  compressed bomb is cut off too); memory stays bounded by the cap.
* **Time**: ``RESEARCH_FETCH_TIMEOUT_S`` bounds the whole fetch, redirects included.
* **Content types**: HTML (``text/html``, ``application/xhtml+xml``), plain text
  (``text/plain``, ``text/markdown``) and PDF (``application/pdf``); anything else is
  refused. A response without a type is sniffed for ``%PDF-`` or an HTML start.

HTML becomes text with **selectolax** (lexbor), already the corpus indexer's parser:
one HTML-to-text path for local and web documents means their canonical texts, and so
the locators into them, are built the same way; it is fast (C parser) and brings no
lxml stack. Main-content selection is a plain rule rather than trafilatura's scoring
heuristics: ``<main>``/``[role=main]``, else the longest ``<article>``, else the body,
with navigation, headers, footers, asides, forms and scripts dropped. Trafilatura
extracts news-style pages more aggressively, but its output is harder to predict and
it would add lxml, justext, htmldate and courlan for a gain the digest stage (which
picks evidence by relevance) mostly does not need.

PDF text comes from **pypdf**, page by page, with the offset of each page in the
canonical text (:class:`FetchedDocument.page_starts`) so locators can name pages.

Errors: :class:`FetchRefused` (policy: scheme, address, size, type) and
:class:`FetchFailed` (the page is there but unusable: 4xx, unreadable PDF, no text)
are permanent; :class:`FetchUnavailable` (timeouts, connection errors, 5xx, 429) is
transient. None of them is ever returned as a page.
"""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
import re
import socket
from dataclasses import dataclass
from typing import Literal, Protocol

import httpx
from selectolax.lexbor import LexborHTMLParser

from services.retrieval.documents import html_to_text, pdf_to_text
from shared.platform.dates import retry_after_s
from shared.platform.errors import PermanentError, TransientError
from shared.research.text import canonicalize, text_hash

__all__ = [
    "FetchFailed",
    "FetchPolicy",
    "FetchRefused",
    "FetchUnavailable",
    "FetchedDocument",
    "check_address",
    "extract_html",
    "fetch_document",
]

USER_AGENT = "deepresearch/0.1 (+research fetcher)"
_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset({"text/plain", "text/markdown"})
_PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
_DEFAULT_PORTS = {"http": 80, "https": 443}

Kind = Literal["html", "text", "pdf"]


class FetchRefused(PermanentError):
    """The fetcher will not fetch this URL or keep this response (policy)."""


class FetchFailed(PermanentError):
    """The page answered but cannot be used (4xx, unreadable PDF, no text)."""


class FetchUnavailable(TransientError):
    """The page could not be reached now (timeout, connection error, 5xx, 429)."""


@dataclass(frozen=True)
class FetchedDocument:
    url: str  # as requested
    final_url: str  # after redirects
    title: str
    text: str  # canonical text (shared.research.text.canonicalize), what locators index into
    text_hash: str  # "sha256-<hex>" of text
    content_type: str  # the media type, without parameters
    page_starts: list[int] | None  # PDF: offset of each page (page n at index n-1)
    bytes_read: int


class _FetchSettings(Protocol):
    research_fetch_allowed_hosts: str
    research_fetch_max_bytes: int
    research_fetch_timeout_s: float
    research_fetch_max_redirects: int


@dataclass(frozen=True)
class FetchPolicy:
    allowed_hosts: frozenset[str] = frozenset()
    max_bytes: int = 10 * 1024 * 1024
    timeout_s: float = 20.0
    max_redirects: int = 5

    @classmethod
    def from_settings(cls, settings: _FetchSettings) -> FetchPolicy:
        hosts = (h.strip().lower().rstrip(".") for h in settings.research_fetch_allowed_hosts.split(","))
        return cls(
            allowed_hosts=frozenset(h.strip("[]") for h in hosts if h),
            max_bytes=settings.research_fetch_max_bytes,
            timeout_s=settings.research_fetch_timeout_s,
            max_redirects=settings.research_fetch_max_redirects,
        )


# -- addresses ------------------------------------------------------------------------

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def check_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why ``ip`` may not be fetched from, or None for a public unicast address."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            reason = check_address(embedded)
            return f"{reason} (embedded in {ip})" if reason else None
    for flag, reason in (
        ("is_unspecified", "unspecified"),
        ("is_loopback", "loopback"),
        ("is_link_local", "link-local"),
        ("is_multicast", "multicast"),
        ("is_private", "private"),
        ("is_reserved", "reserved"),
    ):
        if getattr(ip, flag):
            return f"{reason} address {ip}"
    if not ip.is_global:  # shared (CGNAT), benchmarking, documentation...
        return f"non-public address {ip}"
    return None


async def _resolve(host: str, port: int, policy: FetchPolicy) -> str:
    """The address to connect to for ``host``, after checking every address it has."""
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [literal]
    else:
        loop = asyncio.get_running_loop()
        try:
            # loop.getaddrinfo runs the blocking lookup in the default thread pool.
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            message = f"cannot resolve host {host!r}: {exc.strerror or exc}"
            if exc.errno == socket.EAI_AGAIN:  # the resolver is struggling, the name may exist
                raise FetchUnavailable(message) from exc
            raise FetchFailed(message) from exc
        addresses = []
        for *_ignored, sockaddr in infos:
            ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
            if ip not in addresses:
                addresses.append(ip)
        if not addresses:
            raise FetchFailed(f"host {host!r} has no address")
    if host not in policy.allowed_hosts:
        for ip in addresses:
            reason = check_address(ip)
            if reason is not None:
                raise FetchRefused(
                    f"refusing to fetch from {host!r}: it resolves to a {reason}; "
                    "allow named hosts with RESEARCH_FETCH_ALLOWED_HOSTS"
                )
    return str(addresses[0])


# -- the fetch ------------------------------------------------------------------------


async def fetch_document(
    url: str, settings: _FetchSettings, *, client: httpx.AsyncClient | None = None
) -> FetchedDocument:
    """The canonical text of ``url`` (HTML, plain text or PDF), fetched under the rules
    in this module's docstring. ``client`` is used if given (tests, connection reuse); it
    must not follow redirects itself."""
    policy = FetchPolicy.from_settings(settings)
    owned = client is None
    if client is None:
        client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(policy.timeout_s),
            headers={"User-Agent": USER_AGENT},
        )
    try:
        async with asyncio.timeout(policy.timeout_s):
            return await _fetch(url, policy, client)
    except TimeoutError as exc:
        raise FetchUnavailable(f"fetching {url} took longer than {policy.timeout_s:g}s") from exc
    finally:
        if owned:
            await client.aclose()


async def _fetch(url: str, policy: FetchPolicy, client: httpx.AsyncClient) -> FetchedDocument:
    current = _parse_url(url)
    for hop in range(policy.max_redirects + 1):
        host = current.host.lower().rstrip(".")
        port = current.port or _DEFAULT_PORTS[current.scheme]
        ip = await _resolve(host, port, policy)
        pinned = current.copy_with(host=ip)
        headers = {"Host": current.netloc.decode("ascii"), "Accept": _ACCEPT}
        extensions = {"sni_hostname": host} if current.scheme == "https" else {}
        try:
            async with client.stream(
                "GET", pinned, headers=headers, extensions=extensions, follow_redirects=False
            ) as resp:
                if resp.status_code in _REDIRECT_CODES and "location" in resp.headers:
                    if hop == policy.max_redirects:
                        raise FetchRefused(f"{url}: more than {policy.max_redirects} redirects")
                    current = _parse_url(str(current.join(resp.headers["location"])))
                    continue
                _check_status(resp, current)
                kind, media_type = _kind(resp, current)
                body = await _read_capped(resp, policy.max_bytes, current)
                charset = resp.charset_encoding
        except httpx.TimeoutException as exc:
            raise FetchUnavailable(f"fetching {current} timed out: {type(exc).__name__}") from exc
        except httpx.TransportError as exc:
            raise FetchUnavailable(f"fetching {current} failed: {type(exc).__name__}: {exc}") from exc
        if kind is None:
            kind = _sniff(body)
            if kind is None:
                raise FetchRefused(f"{current}: no Content-Type and the body is neither HTML nor PDF")
            media_type = {"pdf": "application/pdf", "html": "text/html", "text": "text/plain"}[kind]
        return await asyncio.to_thread(_to_document, url, str(current), kind, media_type, body, charset)
    raise AssertionError("unreachable")


_ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8"


def _parse_url(url: str) -> httpx.URL:
    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError) as exc:
        raise FetchRefused(f"not a valid URL: {url!r}") from exc
    if parsed.scheme not in ("http", "https"):
        raise FetchRefused(f"refusing to fetch {url!r}: only http and https URLs are fetched")
    if not parsed.host:
        raise FetchRefused(f"refusing to fetch {url!r}: the URL has no host")
    return parsed


def _check_status(resp: httpx.Response, url: httpx.URL) -> None:
    code = resp.status_code
    if code == 429 or code >= 500:
        retry_after = retry_after_s(resp.headers.get("retry-after"))
        raise FetchUnavailable(f"{url} answered HTTP {code}", retry_after_s=retry_after)
    if code >= 300:
        raise FetchFailed(f"{url} answered HTTP {code}")


def _kind(resp: httpx.Response, url: httpx.URL) -> tuple[Kind | None, str]:
    """(kind, media type) from Content-Type; kind None means "no type: sniff"."""
    header = resp.headers.get("content-type", "")
    media_type = header.split(";", 1)[0].strip().lower()
    if not media_type:
        return None, ""
    if media_type in _HTML_TYPES:
        return "html", media_type
    if media_type in _TEXT_TYPES:
        return "text", media_type
    if media_type in _PDF_TYPES:
        return "pdf", media_type
    raise FetchRefused(f"{url}: content type {media_type!r} is not fetched (only HTML, plain text and PDF)")


async def _read_capped(resp: httpx.Response, max_bytes: int, url: httpx.URL) -> bytes:
    declared = resp.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise FetchRefused(f"{url}: {int(declared)} bytes is over the {max_bytes}-byte limit")
    chunks: list[bytes] = []
    total = 0
    async for chunk in resp.aiter_bytes():
        total += len(chunk)
        if total > max_bytes:
            raise FetchRefused(f"{url}: the body is over the {max_bytes}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


def _sniff(body: bytes) -> Kind | None:
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "pdf"
    if head.startswith((b"<!doctype html", b"<html")):
        return "html"
    return None


# -- bodies to text ------------------------------------------------------------------

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def _decode(body: bytes, charset: str | None, *, html: bool) -> str:
    candidates = [charset]
    if html:
        m = _META_CHARSET.search(body[:4096])
        candidates.append(m.group(1).decode("ascii") if m else None)
    for name in candidates:
        if not name:
            continue
        try:
            codecs.lookup(name)
        except LookupError:
            continue
        return body.decode(name, errors="replace")
    return body.decode("utf-8", errors="replace")


def extract_html(html: str) -> tuple[str | None, str]:
    """(title, main text) of a web page: ``<main>`` or ``[role=main]``, else the longest
    ``<article>``, else the whole body, through :func:`index.html_to_text`."""
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = canonicalize(title_node.text()) if title_node is not None else ""
    main = tree.css_first("main") or tree.css_first('[role="main"]')
    if main is None:
        articles = tree.css("article")
        if articles:
            main = max(articles, key=lambda node: len(node.text(deep=True)))
    fragment = main.html if main is not None else None
    _, text = html_to_text(f"<html><body>{fragment}</body></html>" if fragment else html)
    if main is not None and not canonicalize(text):
        _, text = html_to_text(html)  # an empty <main> is a layout shell, not the content
    return (title or None), text


def _to_document(
    url: str, final_url: str, kind: Kind, media_type: str, body: bytes, charset: str | None
) -> FetchedDocument:
    page_starts: list[int] | None = None
    if kind == "pdf":
        try:
            pdf = pdf_to_text(body)
        except PermanentError as exc:
            raise FetchFailed(f"{final_url}: {exc}") from exc
        title, text, page_starts = pdf.title, pdf.text, pdf.page_starts
    elif kind == "html":
        title, raw = extract_html(_decode(body, charset, html=True))
        text = canonicalize(raw)
    else:
        title, text = None, canonicalize(_decode(body, charset, html=False).lstrip("\ufeff"))
    if not text:
        raise FetchFailed(f"{final_url}: no text after extraction")
    return FetchedDocument(
        url=url,
        final_url=final_url,
        title=title or _title_from_url(final_url),
        text=text,
        text_hash=text_hash(text),
        content_type=media_type,
        page_starts=page_starts,
        bytes_read=len(body),
    )


def _title_from_url(url: str) -> str:
    parsed = httpx.URL(url)
    last = parsed.path.rstrip("/").rsplit("/", 1)[-1]
    return last or parsed.host
