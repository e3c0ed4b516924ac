"""A raw HTTP/1.x client for verification: exact bytes out, h11 parsing in.

A normal HTTP library hides what we must check (pipelining, HTTP/1.0, connection reuse, header
sets, framing), so requests are written by hand and responses are parsed by h11, which is strict
about framing and reports a malformed response as an error instead of guessing.
"""
import socket
import time
from dataclasses import dataclass

import h11

NOT_COMPARED = {"date", "server", "connection", "keep-alive"}


class HttpError(Exception):
    pass


class ResponseTimeout(HttpError):
    """The server sent no complete response within the timeout."""


class PeerClosed(HttpError):
    """The server ended the connection before it answered."""


def read_response(parser: h11.Connection, receive) -> tuple[h11.Response, bytes]:
    """One final response off `parser`, calling `receive()` whenever it needs more bytes (b"": the
    peer closed); 1xx responses are skipped. The one read loop of the verifier's client and of the
    protocol checks: HttpError for a malformed response, PeerClosed when the connection ends before
    an answer; whatever `receive` raises (a timeout, say) passes through."""
    head, body = None, bytearray()
    while True:
        try:
            event = parser.next_event()
        except h11.RemoteProtocolError as e:
            raise HttpError(f"malformed response: {e}") from None
        if event is h11.NEED_DATA:
            parser.receive_data(receive())
        elif isinstance(event, h11.Response):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            return head, bytes(body)
        elif isinstance(event, h11.ConnectionClosed):
            raise PeerClosed("the server closed the connection before answering")


@dataclass
class Response:
    status: int
    headers: list[tuple[str, str]]  # lower-case names, in the order sent
    body: bytes
    http_version: str
    seconds: float = 0.0

    @classmethod
    def from_h11(cls, head: h11.Response, body: bytes, seconds: float = 0.0) -> "Response":
        return cls(head.status_code, [(n.decode().lower(), v.decode("latin-1")) for n, v in head.headers],
                   bytes(body), head.http_version.decode(), seconds)

    def header(self, name: str) -> str | None:
        values = [v for n, v in self.headers if n == name]
        return values[0] if values else None

    def normalized(self) -> dict:
        return {"status": self.status,
                "headers": dict(sorted((n, v) for n, v in self.headers if n not in NOT_COMPARED)),
                "body": self.body}


def request_headers(method: str, host: str, extra: dict | None = None) -> list[tuple[str, str]]:
    headers = [("Host", host)]
    if method not in ("GET", "HEAD"):
        headers.append(("Content-Length", "0"))
    return headers + list((extra or {}).items())


def request_bytes(method: str, target: str, headers: list[tuple[str, str]], version: str = "1.1") -> bytes:
    lines = [f"{method} {target} HTTP/{version}"] + [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


class Connection:
    """One TCP connection; send() may carry several requests at once (pipelining)."""

    def __init__(self, host: str, port: int, timeout: float = 5.0):
        self.host, self.port, self.timeout = host, port, timeout
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.parser = h11.Connection(h11.CLIENT)
        self.closed_by_peer = False

    def close(self) -> None:
        self.sock.close()

    @property
    def reusable(self) -> bool:
        """False once either side has said the connection ends after the last response."""
        return not self.closed_by_peer and self.parser.our_state is h11.IDLE

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def exchange(self, requests: list[tuple[str, str]], version: str = "1.1",
                 headers: dict | None = None) -> list[Response]:
        """Send all requests in one write, then read one response for each, in order."""
        framed = [(m, t, request_headers(m, self.host, headers)) for m, t in requests]
        started = time.monotonic()
        self.sock.sendall(b"".join(request_bytes(m, t, h, version) for m, t, h in framed))
        responses = []
        for method, target, h in framed:
            # Only advances h11's state (it must know each request: a HEAD response has no body);
            # the bytes already went out above, all in one write.
            # h11 only writes HTTP/1.1 ("I only send HTTP/1.1"): an HTTP/1.0 request is tracked as the
            # HTTP/1.1 request with the same meaning, one that ends the connection after its response.
            tracked = h if version == "1.1" else h + [("Connection", "close")]
            try:
                self.parser.send(h11.Request(method=method, target=target, headers=tracked))
                self.parser.send(h11.EndOfMessage())
            except h11.LocalProtocolError as e:
                raise HttpError(f"connection not reusable after the previous response: {e}") from None
            responses.append(self._read_response(started))
        self._expect_nothing_more(head=framed[-1][0] == "HEAD")
        return responses

    def request(self, method: str, target: str, **kw) -> Response:
        return self.exchange([(method, target)], **kw)[0]

    def _read_response(self, started: float) -> Response:
        def receive() -> bytes:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                raise ResponseTimeout(f"no complete response within {self.timeout:.1f}s") from None
            except ConnectionResetError:
                raise HttpError("connection reset by the server") from None
            if not data:
                self.closed_by_peer = True
            return data

        head, body = read_response(self.parser, receive)
        elapsed = time.monotonic() - started
        if self.parser.our_state is h11.DONE and self.parser.their_state is h11.DONE:
            self.parser.start_next_cycle()
        return Response.from_h11(head, body, elapsed)

    def _expect_nothing_more(self, head: bool) -> None:
        """Bytes after the last answer mean a wrong length, or a body sent on HEAD."""
        extra = self.parser.trailing_data[0]
        if not extra and head and not self.closed_by_peer:
            # A body on HEAD may trail the headers by a moment: look without consuming it.
            self.sock.settimeout(0.05)
            try:
                extra = self.sock.recv(4096, socket.MSG_PEEK)
            except (socket.timeout, BlockingIOError):
                extra = b""
            except ConnectionResetError:
                extra = b""
            finally:
                self.sock.settimeout(self.timeout)
        if extra:
            raise HttpError(f"{len(extra)} unexpected bytes after the response"
                            f"{' to HEAD (a body?)' if head else ''}: {extra[:40]!r}")

    def peer_closed(self, wait: float = 2.0) -> bool:
        """True when the server closes the connection within `wait` seconds (and sends nothing more)."""
        if self.closed_by_peer:
            return True
        self.sock.settimeout(wait)
        try:
            return self.sock.recv(1) == b""
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True
        finally:
            self.sock.settimeout(self.timeout)


def fetch(host: str, port: int, method: str, target: str, timeout: float = 5.0) -> Response:
    with Connection(host, port, timeout) as c:
        return c.request(method, target)
