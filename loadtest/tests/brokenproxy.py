"""A proxy in front of a correct stack that breaks one thing on purpose.

The verifier's tests run each check through it: with no fault every check passes, and each
fault must make the check that guards against it fail. That is how we know no check is a
check that cannot fail.
"""
import socket
import threading
import time
from email.utils import formatdate

import h11

from harness.contract.http_client import Connection, HttpError

FAULTS = {
    "none": "forward faithfully",
    "escaped_slash": "JSON bodies write / as \\/ (a common encoder default)",
    "extra_header": "adds X-Powered-By",
    "no_date": "drops Date",
    "frozen_date": "sends the Date of the proxy's start forever",
    "wrong_server": "Server: nginx",
    "chunked": "Transfer-Encoding: chunked instead of Content-Length",
    "cache": "serves every path from a cache after the first time",
    "no_sleep": "answers /sleep at once (from a cache) after the first time",
    "double_read": "forwards each data request twice",
    "read_on_400": "touches a backend when answering 400",
    "close_always": "closes the connection after every response",
    "no_pipelining": "answers only the first request of a pipelined batch",
    "dies_after_pipelining": "answers a pipelined batch, then nothing more (a crash in handing one answer on to the next)",
    "http10_keep_open": "keeps HTTP/1.0 connections open",
    "ignore_close": "keeps the connection open despite Connection: close",
    "head_body": "sends the body on HEAD",
    "slow_503": "delays 503 answers by 2 s",
    "503_as_500": "turns 503 into 500",
    "500_as_503": "turns 500 into 503 (every backend error reported as unavailability)",
    "crossed": "under concurrency, now and then answers with the previous data response's body",
    "stall": "reads every request and never answers (a hung server whose kernel still accepts)",
}


class BrokenProxy:
    def __init__(self, upstream: tuple[str, int], fault: str = "none"):
        assert fault in FAULTS, fault
        self.upstream, self.fault = upstream, fault
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.port = self.listener.getsockname()[1]
        self.started = formatdate(usegmt=True)
        self.cache: dict[str, tuple] = {}
        self.last_data_body = None
        self.count = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.listener.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _forward(self, up: list, method: str, target: str):
        if up[0] is None or not up[0].reusable:
            if up[0] is not None:
                up[0].close()
            up[0] = Connection(*self.upstream, timeout=10)
        return up[0].request(method, target)

    def _serve(self, client: socket.socket) -> None:
        parser = h11.Connection(h11.SERVER)
        up = [None]
        try:
            while True:
                data = client.recv(65536)
                if not data:
                    return
                parser.receive_data(data)
                answered = 0
                while True:
                    event = parser.next_event()
                    if event in (h11.NEED_DATA, h11.PAUSED):
                        break
                    if isinstance(event, h11.Request):
                        request = event
                        if self.fault == "stall":
                            with self.lock:
                                self.count += 1
                    elif isinstance(event, h11.EndOfMessage):
                        if self.fault == "stall":
                            continue
                        if self.fault == "no_pipelining" and answered:
                            break  # drop the rest of the batch
                        keep = self._answer(client, parser, up, request)
                        answered += 1
                        if not keep:
                            return
                    elif isinstance(event, h11.ConnectionClosed):
                        return
                if self.fault == "dies_after_pipelining" and answered > 1:
                    self.listener.close()
                    return
        except (OSError, HttpError, h11.ProtocolError):
            return
        finally:
            client.close()
            if up[0] is not None:
                up[0].close()

    def _answer(self, client, parser, up, request) -> bool:
        method, target = request.method.decode(), request.target.decode()
        data_path = target.split("?")[0] in ("/redis", "/mysql", "/memcache")
        if target in self.cache and (self.fault == "cache" or self.fault == "no_sleep" and target == "/sleep"):
            resp = self.cache[target]
        else:
            resp = self._forward(up, method, target)
            self.cache.setdefault(target, resp)
        if self.fault == "double_read" and data_path:
            self._forward(up, method, target)
        if self.fault == "read_on_400" and data_path and resp.status == 400:
            self._forward(up, "GET", target.split("?")[0] + "?id=1")

        status, body = resp.status, resp.body
        headers = [(n, v) for n, v in resp.headers if n not in ("connection", "keep-alive")]
        f = self.fault
        if f == "escaped_slash" and data_path:
            body = body.replace(b"/", b"\\/")
            headers = [(n, str(len(body)) if n == "content-length" else v) for n, v in headers]
        if f == "crossed" and data_path and status == 200:
            with self.lock:
                self.count += 1
                previous, self.last_data_body = self.last_data_body, body
                if self.count % 7 == 0 and previous is not None:
                    body = previous
                    headers = [(n, str(len(body)) if n == "content-length" else v) for n, v in headers]
        if f == "extra_header":
            headers.append(("x-powered-by", "Proxy/1.0"))
        if f == "no_date":
            headers = [(n, v) for n, v in headers if n != "date"]
        if f == "frozen_date":
            headers = [(n, self.started if n == "date" else v) for n, v in headers]
        if f == "wrong_server":
            headers = [(n, "nginx" if n == "server" else v) for n, v in headers]
        if f == "slow_503" and status == 503:
            time.sleep(2)
        if f == "503_as_500" and status == 503:
            status, body = 500, b"Internal Server Error"
            headers = [(n, "21" if n == "content-length" else v) for n, v in headers]
        if f == "500_as_503" and status == 500:
            status, body = 503, b"Service Unavailable"
            headers = [(n, "19" if n == "content-length" else v) for n, v in headers]

        # Let h11 track the exchange (keep-alive rules); what goes out on the wire is built below.
        parser.send(h11.Response(status_code=200, headers=[("content-length", "0")]))
        parser.send(h11.EndOfMessage())
        keep = parser.our_state is h11.DONE and parser.their_state is h11.DONE
        if f == "close_always":
            keep = False
        if f == "http10_keep_open" and request.http_version == b"1.0":
            keep = True
        if f == "ignore_close" and not keep and request.http_version == b"1.1":
            keep = True
        if keep and parser.our_state is h11.DONE:
            parser.start_next_cycle()

        send_body = method != "HEAD" or f == "head_body"
        if f == "head_body" and method == "HEAD":
            body = b"x" * int(dict(headers)["content-length"])
        if f == "chunked":
            headers = [(n, v) for n, v in headers if n != "content-length"] + [("transfer-encoding", "chunked")]
            payload = (f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n" if body else b"0\r\n\r\n")
        else:
            payload = body
        if not keep:
            headers.append(("connection", "close"))
        head = f"HTTP/1.1 {status} X\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers) + "\r\n"
        client.sendall(head.encode("latin-1") + (payload if send_body else b""))
        if not keep and f != "http10_keep_open" and f != "ignore_close":
            client.shutdown(socket.SHUT_RDWR)
        return keep or f in ("http10_keep_open", "ignore_close")
