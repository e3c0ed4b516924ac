"""A small HTTP/1.1 server that keeps the contract's protocol rules, or breaks exactly one on purpose.

The protocol checks are proved on it: with no fault every check passes, and each fault must make
the check that guards against it fail. It serves only what those checks ask for: /hello, /sleep
and the data endpoints (their golden bodies, from the contract's data), 404 and 405.

Run: python laxserver.py PORT FAULT HEAD_TIMEOUT_MS IDLE_TIMEOUT_MS
"""
import asyncio
import email.utils
import re
import sys
import urllib.parse

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
from harness import contract  # noqa: E402

NAME = "laxserver"
FAULTS = {
    "none": "keeps every rule",
    "small_heads": "refuses heads over 4 KiB with 431 (a big cookie is refused)",
    "no_line_limit": "serves request lines of any length",
    "head_500": "answers oversized heads with 500",
    "head_silent_close": "closes without answering when a head is too large",
    "open_after_refusal": "keeps the connection open after a refusal",
    "first_length": "takes the first of several Content-Length values and ignores bad ones",
    "space_before_colon": "accepts whitespace between a field name and its colon",
    "bad_name_chars": "accepts spaces and control bytes in field names",
    "length_over_chunked": "frames a request with both Transfer-Encoding and Content-Length by Content-Length",
    "body_ignored": "does not read request bodies: they are parsed as the next request",
    "fractional_length": "reads Content-Length: 1.5 as 1 and waits for that byte of body, answering 408 after "
                         "HEAD_TIMEOUT_MS (what Swoole 6.2.2's reactor does)",
    "no_head_timeout": "waits for a head forever",
    "blocking": "handles one connection at a time (a trickling client blocks everyone)",
    "no_idle_timeout": "keeps idle connections forever",
    "idle_too_soon": "closes idle connections after a fifth of IDLE_TIMEOUT_MS",
    "unbounded_pipeline": "keeps reading pipelined requests while its answers pile up unread",
    "leak_on_disconnect": "never closes a connection whose client left mid-request",
    "connection_cap": "closes every connection beyond the 2,000th",
    "host_lax": "serves a request whatever its Host lines say (none, two, or an invalid value)",
    "target_lax": "serves any bytes in the target, and answers * and authority-form with 404",
    "method_lax": "answers CONNECT with 404, serves any method token as a method (405), and refuses a line too long for a method with 400",
    "version_lax": "serves any version (http/1.1, HTTP/1, HTTP/2.0) as HTTP/1.1",
    "fold_as_field": "reads an obs-fold continuation line as a field of its own",
    "field_lax": "skips field lines without a colon and keeps control bytes in values",
    "ignores_close": "keeps a connection open after a request that said Connection: close",
    "pipeline_first_only": "answers the first request of each read and drops the rest of it",
}
MAX_METHOD = 32
TARGET_BYTES = re.compile(rb"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$")  # RFC 3986
HOST = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+;=%]+)(?::\d*)?$")  # uri-host [":" port], no userinfo
TCHAR = re.compile(rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
MAX_LINE, MAX_HEAD = 8192, 16384


class Refuse(Exception):
    def __init__(self, status: int):
        self.status = status


def response(status: int, body: bytes, head_only: bool = False, close: bool = False, extra=()) -> bytes:
    headers = [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body))),
               ("Date", email.utils.formatdate(usegmt=True)), ("Server", NAME), *extra]
    if close:
        headers.append(("Connection", "close"))
    return (f"HTTP/1.1 {status} X\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers) + "\r\n").encode() + (
        b"" if head_only else body)


ERRORS = {400: b"Bad Request", 404: b"Not Found", 405: b"Method Not Allowed", 408: b"Request Timeout",
          414: b"URI Too Long", 431: b"Request Header Fields Too Large", 500: b"Internal Server Error",
          501: b"Not Implemented", 505: b"HTTP Version Not Supported"}


class Server:
    def __init__(self, fault: str, head_timeout: float, idle_timeout: float):
        self.fault, self.head_timeout, self.idle_timeout = fault, head_timeout, idle_timeout
        self.one_at_a_time = asyncio.Lock()
        self.connections = 0
        self.leaked = []
        self.greetings = contract.greetings()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self.fault == "connection_cap" and self.connections > 2000:
            writer.close()
            return
        if self.fault == "unbounded_pipeline":
            writer.transport.set_write_buffer_limits(high=1 << 40)
        if self.fault == "blocking":
            async with self.one_at_a_time:
                await self.connection(reader, writer)
        else:
            await self.connection(reader, writer)

    async def connection(self, reader, writer) -> None:
        buf = b""
        try:
            while True:
                buf, keep = await self.one_request(reader, writer, buf)
                if not keep:
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        if self.fault == "leak_on_disconnect" and reader.at_eof():
            self.leaked.append(writer)  # never closed: its descriptor stays
            return
        writer.close()

    def check_sizes(self, buf: bytes, complete: bool) -> None:
        line_end = buf.find(b"\r\n")
        line = buf if line_end < 0 else buf[:line_end]
        method_end = line.find(b" ")
        if method_end < 0 and len(line) > MAX_METHOD or method_end > MAX_METHOD:
            if self.fault != "method_lax":
                raise Refuse(501)
            if len(line) > MAX_LINE:
                raise Refuse(400)
        if len(line) > MAX_LINE and self.fault != "no_line_limit":
            raise Refuse(414)
        limit = 4096 if self.fault == "small_heads" else MAX_HEAD
        head = buf[:buf.find(b"\r\n\r\n") + 4] if complete else buf
        if len(head) > limit and (line_end >= 0 or self.fault == "no_line_limit"):
            raise Refuse(431)

    async def read_head(self, reader, buf: bytes) -> tuple[bytes, bytes]:
        """(head, rest); raises Refuse on a limit, TimeoutError when the time is up, EOF when gone."""
        first, started = buf == b"", asyncio.get_running_loop().time()
        while b"\r\n\r\n" not in buf:
            self.check_sizes(buf, complete=False)
            if first:
                wait = None if self.fault == "no_idle_timeout" else self.idle_timeout / (
                    5 if self.fault == "idle_too_soon" else 1)
            else:
                wait = None if self.fault == "no_head_timeout" else \
                    max(0.0, started + self.head_timeout - asyncio.get_running_loop().time())
            chunk = await asyncio.wait_for(reader.read(65536), wait)
            if not chunk:
                raise EOFError
            if first:
                started, first = asyncio.get_running_loop().time(), False
            buf += chunk
        self.check_sizes(buf, complete=True)
        head, _, rest = buf.partition(b"\r\n\r\n")
        return head, rest

    def parse(self, head: bytes) -> tuple[str, str, dict]:
        lines = head.split(b"\r\n")
        try:
            method, target, version = lines[0].split(b" ")
        except ValueError:
            raise Refuse(400) from None
        if not TCHAR.match(method):
            raise Refuse(400)
        v = re.fullmatch(rb"HTTP/(\d)\.(\d)", version)
        if not v and self.fault != "version_lax":
            raise Refuse(400)
        if v and v.group(1) != b"1" and self.fault != "version_lax":
            raise Refuse(505)
        http10 = version == b"HTTP/1.0"
        if not TARGET_BYTES.match(target) and self.fault != "target_lax":
            raise Refuse(400)
        if target.startswith(b"http://"):
            target = b"/" + target[len(b"http://"):].partition(b"/")[2]  # absolute-form (RFC 9112 §3.2.2)
        elif method == b"CONNECT" and self.fault != "method_lax":
            raise Refuse(501)
        elif not target.startswith(b"/") and self.fault != "target_lax":
            raise Refuse(400)  # asterisk-form without OPTIONS, authority-form without CONNECT
        fields: dict[str, list[str]] = {}
        last = None
        for line in lines[1:]:
            if line[:1] in (b" ", b"\t"):
                if self.fault != "fold_as_field":
                    raise Refuse(400)  # obs-fold (RFC 9112 §5.2): refused, as a server may
                line = line.lstrip()
            name, colon, value = line.partition(b":")
            if not colon:
                if self.fault == "field_lax":
                    continue
                raise Refuse(400)
            if name != name.rstrip() and self.fault != "space_before_colon":
                raise Refuse(400)
            name = name.rstrip()
            if not TCHAR.match(name):
                if self.fault == "bad_name_chars" or re.match(rb"^[\x21-\x7e]+$", name):
                    continue  # another non-tchar: served as if the field were absent (allowed)
                raise Refuse(400)
            if b"\x00" in value and self.fault != "field_lax":
                raise Refuse(400)
            last = name.decode().lower()
            fields.setdefault(last, []).append(value.strip().decode("latin-1"))
        hosts = fields.get("host", [])
        if self.fault != "host_lax" and (len(hosts) > 1 or (not hosts and not http10)
                                         or (hosts and not HOST.match(hosts[0]))):
            raise Refuse(400)
        if http10:
            fields.setdefault("connection", ["close"])
        return method.decode("latin-1"), target.decode("latin-1"), fields

    def body_length(self, fields: dict) -> int | str:
        lengths = fields.get("content-length", [])
        if "transfer-encoding" in fields:
            if lengths and self.fault == "length_over_chunked":
                return int(lengths[0])
            if lengths:
                raise Refuse(400)
            return "chunked"
        if not lengths:
            return 0
        if self.fault == "first_length":
            return int(lengths[0]) if lengths[0].isdigit() else 0
        if self.fault == "fractional_length" and re.fullmatch(r"\d+\.\d+", lengths[-1]):
            return int(float(lengths[-1]))
        if len(set(lengths)) > 1 or not lengths[0].isdigit():
            raise Refuse(400)
        return int(lengths[0])

    async def skip_body(self, reader, rest: bytes, length) -> bytes:
        if self.fault == "body_ignored":
            return rest
        if length == "chunked":
            buf = rest
            while True:
                while b"\r\n" not in buf:
                    more = await reader.read(65536)
                    if not more:
                        raise EOFError
                    buf += more
                size_line, _, buf = buf.partition(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                while len(buf) < size + 2:
                    more = await reader.read(65536)
                    if not more:
                        raise EOFError
                    buf += more
                buf = buf[size + 2:]
                if size == 0:
                    return buf
        while len(rest) < length:
            more = await reader.read(65536)
            if not more:
                raise EOFError
            rest += more
        return rest[length:]

    async def one_request(self, reader, writer, buf: bytes) -> tuple[bytes, bool]:
        try:
            head, rest = await self.read_head(reader, buf)
            method, target, fields = self.parse(head)
            length = self.body_length(fields)
        except Refuse as r:
            if self.fault == "head_silent_close" and r.status in (414, 431):
                return b"", False
            status = 500 if self.fault == "head_500" and r.status in (414, 431) else r.status
            keep = self.fault == "open_after_refusal"
            writer.write(response(status, ERRORS[status], close=not keep))
            await writer.drain()
            if keep:
                await asyncio.sleep(3600)
            return b"", False
        except (TimeoutError, asyncio.TimeoutError):
            return b"", False
        except EOFError:
            return b"", False
        if length == "chunked" and self.fault == "length_over_chunked":
            length = 0
        try:
            wait = self.head_timeout if self.fault == "fractional_length" else None
            rest = await asyncio.wait_for(self.skip_body(reader, rest, length), wait)
        except (TimeoutError, asyncio.TimeoutError):
            writer.write(response(408, ERRORS[408], close=True))
            await writer.drain()
            return b"", False
        except EOFError:
            return b"", False
        path, _, query = target.partition("?")
        out = await self.answer(method, path, query, reader)
        if out is None:
            return b"", False
        writer.write(out)
        if self.fault != "unbounded_pipeline":
            await writer.drain()
        if "close" in fields.get("connection", [""])[0].lower() and self.fault != "ignores_close":
            return b"", False
        return (b"" if self.fault == "pipeline_first_only" else rest), True

    async def answer(self, method: str, path: str, query: str, reader) -> bytes | None:
        head_only = method == "HEAD"
        if path not in ("/hello", "/sleep", "/redis", "/mysql", "/memcache"):
            return response(404, ERRORS[404], head_only)
        if method not in ("GET", "HEAD"):
            return response(405, ERRORS[405], head_only, extra=[("Allow", "GET, HEAD")])
        if path == "/hello":
            return response(200, b"Hello, World!", head_only)
        if path == "/sleep":
            await asyncio.sleep(0.011)
            return None if reader.at_eof() and self.fault == "leak_on_disconnect" else \
                response(200, b"Slept 10 ms", head_only)
        await asyncio.sleep(0.002)  # a backend's round trip
        if reader.at_eof() and self.fault == "leak_on_disconnect":
            return None
        ids = urllib.parse.parse_qs(query, keep_blank_values=True).get("id", [])
        if len(ids) != 1 or not re.fullmatch(r"[1-9][0-9]{0,8}", ids[0]):
            return response(400, ERRORS[400], head_only)
        i = int(ids[0])
        if i not in self.greetings:
            return response(404, ERRORS[404], head_only)
        body = contract.json_body(i, self.greetings[i])
        return response(200, body, head_only).replace(b"text/plain; charset=utf-8", b"application/json")


async def main(port: int, fault: str, head_ms: int, idle_ms: int) -> None:
    server = Server(fault, head_ms / 1000, idle_ms / 1000)
    listener = await asyncio.start_server(server.serve, "127.0.0.1", port, backlog=4096)
    async with listener:
        await listener.serve_forever()


if __name__ == "__main__":
    port, fault, head_ms, idle_ms = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    assert fault in FAULTS, fault
    asyncio.run(main(port, fault, head_ms, idle_ms))
