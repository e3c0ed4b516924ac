"""A TCP proxy between a stack and its Redis or memcached that, when told, answers the reads itself
with the backend's own error reply: the backend-error checks' way to make a backend that is up say
"no" to a read (memcached has no error reply to a `get` that a client could provoke, nor has Redis
a busy reply).

Transparent until told: every request is passed on and every reply passed back, in order. Inside
`answering("error")` or `answering("busy")` each read (Redis `GET`; memcached `get`/`gets`/`gat`/
`gats`, binary GET, GETQ, GETK, GETKQ, GAT, GATQ, GATK, GATKQ) is answered by the proxy in the
backend's protocol and not passed on; every other command still is (pings, handshakes, version),
so connections a stack opens meanwhile still set up. Replies keep the order of their requests
on each connection, pipelined or not: the proxy frames requests and replies for that.

    reply         Redis                                    memcached text          memcached binary
    "error"       -ERR ...                                 SERVER_ERROR ...        status 0x0084 Internal error
    "busy"        -LOADING Redis is loading the dataset    (none in the protocol)  status 0x0085 Busy
                  in memory

What it cannot frame (RESP3 pushes and attributes, memcached's meta commands) closes that
connection and is recorded in `problems`, so a check says so instead of passing or failing for a
reason nobody sees.
"""
import contextlib
import socket
import struct
import threading
from collections import deque

REPLIES = {
    "redis": {"error": b"-ERR error reply injected by the verifier's error proxy\r\n",
              "busy": b"-LOADING Redis is loading the dataset in memory\r\n"},
    "text": {"error": b"SERVER_ERROR error reply injected by the verifier's error proxy\r\n"},
    "binary": {"error": (0x0084, b"Internal error"), "busy": (0x0085, b"Busy")},
}
# What a reply is called in the verifier's output.
SHOWN = {("redis", "error"): "-ERR", ("redis", "busy"): "-LOADING",
         ("text", "error"): "SERVER_ERROR", ("binary", "error"): "status 0x0084", ("binary", "busy"): "status 0x0085"}

BINARY_READS = {0x00, 0x09, 0x0c, 0x0d, 0x1d, 0x1e, 0x23, 0x24}   # GET, GETQ, GETK, GETKQ, GAT, GATQ, GATK, GATKQ
BINARY_QUIET = {0x09, 0x0d, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1e, 0x24}
BINARY_STAT = 0x10
TEXT_READS = {b"get", b"gets", b"gat", b"gats"}
TEXT_STORAGE = {b"set", b"add", b"replace", b"append", b"prepend", b"cas"}
TEXT_ERRORS = (b"ERROR", b"CLIENT_ERROR", b"SERVER_ERROR")


class Unframeable(Exception):
    """Bytes the proxy cannot frame: it closes that connection and records why."""


class Incomplete(Exception):
    """More bytes are needed."""


# ---------------------------------------------------------------- framing: Redis (RESP2)

def _line(buf: bytes, at: int) -> tuple[bytes, int]:
    end = buf.find(b"\r\n", at)
    if end < 0:
        raise Incomplete
    return buf[at:end], end + 2


def redis_request(buf: bytes) -> tuple[list[bytes], int]:
    """(the command's words, bytes used): an array of bulk strings, or an inline command."""
    if buf[:1] != b"*":
        line, used = _line(buf, 0)
        return line.split(), used
    head, at = _line(buf, 0)
    words = []
    for _ in range(int(head[1:])):
        size, at = _line(buf, at)
        if size[:1] != b"$":
            raise Unframeable(f"a Redis request with {size[:20]!r} where a bulk string was expected")
        n = int(size[1:])
        if len(buf) < at + n + 2:
            raise Incomplete
        words.append(buf[at:at + n])
        at += n + 2
    return words, at


def redis_reply(buf: bytes, at: int = 0) -> int:
    """Where the reply starting at `at` ends (RESP2, and RESP3's scalar and aggregate types)."""
    kind = buf[at:at + 1]
    if not kind:
        raise Incomplete
    line, end = _line(buf, at)
    if kind in b"+-:_,#(":
        return end
    if kind in b"$!=":
        n = int(line[1:])
        if n < 0:
            return end
        if len(buf) < end + n + 2:
            raise Incomplete
        return end + n + 2
    if kind in b"*~%":
        n = int(line[1:])
        for _ in range(max(n, 0) * (2 if kind == b"%" else 1)):
            end = redis_reply(buf, end)
        return end
    raise Unframeable(f"a Redis reply of type {kind!r} (pushes and attributes are not framed here)")


# ---------------------------------------------------------------- framing: memcached text

def text_request(buf: bytes) -> tuple[bytes, str, int]:
    """(command, the reply it gets: "values", "line" or "none", bytes used)."""
    line, used = _line(buf, 0)
    words = line.split()
    if not words:
        raise Unframeable("an empty memcached request line")
    cmd = words[0]
    noreply = words[-1] == b"noreply"
    if cmd in TEXT_STORAGE:
        n = int(words[4])
        if len(buf) < used + n + 2:
            raise Incomplete
        return cmd, "none" if noreply else "line", used + n + 2
    if cmd in TEXT_READS or (cmd == b"stats" and words[1:2] not in ([b"reset"], [b"detail"])):
        return cmd, "values", used
    if cmd == b"quit":
        return cmd, "none", used
    if len(cmd) == 2 and cmd.isalpha():
        raise Unframeable(f"memcached's meta command {cmd.decode()!r} (not framed here)")
    return cmd, "none" if noreply else "line", used


def text_reply(buf: bytes, shape: str) -> int:
    """Where the reply to a request answered with `shape` ends."""
    line, at = _line(buf, 0)
    if shape == "line" or line.startswith(TEXT_ERRORS):
        return at
    while True:  # VALUE blocks and STAT lines up to END
        if line == b"END":
            return at
        if line.startswith(b"VALUE "):
            n = int(line.split()[3])
            if len(buf) < at + n + 2:
                raise Incomplete
            at += n + 2
        line, at = _line(buf, at)


# ---------------------------------------------------------------- framing: memcached binary

HEADER = struct.Struct(">BBHBBHIIQ")  # magic, opcode, key length, extras length, data type, status/vbucket, body, opaque, cas


def binary_packet(buf: bytes) -> tuple[tuple, int]:
    if len(buf) < HEADER.size:
        raise Incomplete
    fields = HEADER.unpack_from(buf)
    if fields[0] not in (0x80, 0x81):
        raise Unframeable(f"a memcached binary packet with magic 0x{fields[0]:02x}")
    end = HEADER.size + fields[6]
    if len(buf) < end:
        raise Incomplete
    return fields, end


def binary_error(request: tuple, status: int, message: bytes) -> bytes:
    _, opcode, _, _, _, _, _, opaque, _ = request
    return HEADER.pack(0x81, opcode, 0, 0, 0, status, len(message), opaque, 0) + message


# ---------------------------------------------------------------- the proxy

class _Entry:
    """One request's place in a connection's reply order."""
    __slots__ = ("data", "ready", "shape", "opcode", "opaque", "quiet")

    def __init__(self, data=b"", ready=False, shape=None, opcode=None, opaque=None, quiet=False):
        self.data, self.ready, self.shape = data, ready, shape
        self.opcode, self.opaque, self.quiet = opcode, opaque, quiet


class ErrorProxy:
    """One listening port in front of one backend (`redis` or `memcache`)."""

    def __init__(self, backend: str, upstream: tuple[str, int]):
        assert backend in ("redis", "memcache"), backend
        self.backend, self.upstream = backend, upstream
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=1024)
        self.host, self.port = self.listener.getsockname()[:2]
        self.reply: str | None = None   # while answering(): "error" or "busy"
        self.given = "error"            # the reply of the last answering()
        self.answered: dict[str, int] = {}  # protocol ("redis", "text", "binary") -> reads answered
        self.problems: list[str] = []
        self.lock = threading.Lock()
        self.open: set[socket.socket] = set()
        threading.Thread(target=self._accept, name=f"error-proxy-{backend}", daemon=True).start()

    @contextlib.contextmanager
    def answering(self, reply: str):
        """Answer every read with `reply` ("error" or "busy") until the block ends."""
        with self.lock:
            self.reply, self.given, self.answered = reply, reply, {}
        try:
            yield self
        finally:
            with self.lock:
                self.reply = None

    def shown(self) -> str:
        """What the reads were answered with, e.g. `8 reads answered SERVER_ERROR (text protocol)`."""
        with self.lock:
            parts = [f"{n} read{'s' if n != 1 else ''} answered {SHOWN[(p, self.given)]}"
                     + ("" if p == "redis" else f" ({p} protocol)") for p, n in self.answered.items()]
        return ", ".join(parts) or "no read reached the proxy"

    def close(self) -> None:
        self.listener.close()
        with self.lock:
            conns, self.open = list(self.open), set()
        for s in conns:
            _close(s)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ connections

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(self.upstream, timeout=5)
                up.settimeout(None)
            except OSError:
                _close(client)  # the backend refuses: so does this connection, as far as it can
                continue
            for s in (client, up):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.open |= {client, up}
            _Connection(self, client, up).start()

    def _fault(self, protocol: str) -> bytes | tuple | None:
        """The reply to give a read now, or None to pass it on; counts what it gives."""
        with self.lock:
            reply = self.reply and REPLIES[protocol].get(self.reply)
            if reply is not None:
                self.answered[protocol] = self.answered.get(protocol, 0) + 1
            return reply

    def _problem(self, what: str) -> None:
        with self.lock:
            if what not in self.problems:
                self.problems.append(what)


class _Connection:
    """A client connection and its upstream one: two threads, replies written in request order."""

    def __init__(self, proxy: ErrorProxy, client: socket.socket, up: socket.socket):
        self.proxy, self.client, self.up = proxy, client, up
        self.protocol = "redis" if proxy.backend == "redis" else None  # memcached: from the first byte
        self.order: deque[_Entry] = deque()     # every request not yet answered to the client, in order
        self.awaiting: deque[_Entry] = deque()  # the ones passed on, waiting for the backend's reply
        self.lock = threading.Lock()

    def start(self) -> None:
        threading.Thread(target=self._requests, daemon=True).start()
        threading.Thread(target=self._replies, daemon=True).start()

    def _end(self, problem: str | None = None) -> None:
        if problem:
            self.proxy._problem(problem)
        for s in (self.client, self.up):
            _close(s)
        with self.proxy.lock:
            self.proxy.open -= {self.client, self.up}

    def _flush(self) -> None:
        """Under self.lock: send every answered request at the head of the order."""
        out = []
        while self.order and self.order[0].ready:
            out.append(self.order.popleft().data)
        if out:
            self.client.sendall(b"".join(out))

    def _requests(self) -> None:
        self._pump(self.client, self._take_requests, "request")

    def _take_requests(self, buf: bytes) -> bytes:
        """Handle every whole request in buf; returns what is left of it."""
        while buf:
            try:
                buf = buf[self._request(buf):]
            except Incomplete:
                break
        return buf

    def _pump(self, sock, take, what: str) -> None:
        """Read sock until it ends, giving the bytes to take, which returns what it did not use."""
        buf = b""
        try:
            while data := sock.recv(65536):
                buf = take(buf + data)
        except Unframeable as e:
            self._end(f"{self.proxy.backend}: {e}")
        except (OSError, ValueError, IndexError) as e:
            self._end(None if isinstance(e, OSError) else f"{self.proxy.backend}: a {what} not understood: {e}")
        finally:
            self._end()

    def _request(self, buf: bytes) -> int:
        """Handle the first request in buf; returns the bytes it took (raises Incomplete)."""
        if self.protocol is None:
            self.protocol = "binary" if buf[0] == 0x80 else "text"
        entry, read = _Entry(), False
        if self.protocol == "redis":
            words, used = redis_request(buf)
            read = bool(words) and words[0].upper() == b"GET"
            if not words:
                entry.shape = "none"  # an empty inline command: Redis answers nothing
        elif self.protocol == "text":
            cmd, entry.shape, used = text_request(buf)
            read = cmd in TEXT_READS
            if entry.shape == "none":
                entry.ready = True
        else:
            fields, used = binary_packet(buf)
            entry.opcode, entry.opaque = fields[1], fields[7]
            entry.quiet = entry.opcode in BINARY_QUIET
            read = entry.opcode in BINARY_READS
        fault = self.proxy._fault(self.protocol) if read else None
        with self.lock:
            if fault is not None:
                entry.ready = True
                entry.data = binary_error(fields, *fault) if self.protocol == "binary" else fault
                self.order.append(entry)
                self._flush()
                return used
            if entry.shape != "none":
                self.order.append(entry)
                self.awaiting.append(entry)
        self.up.sendall(buf[:used])
        return used

    def _replies(self) -> None:
        self._pump(self.up, self._take_replies, "reply")

    def _take_replies(self, buf: bytes) -> bytes:
        """Give every whole reply in buf to its request and send what is answered; returns the rest."""
        with self.lock:
            while buf:
                try:
                    buf = buf[self._reply(buf):]
                except Incomplete:
                    break
            self._flush()
        return buf

    def _reply(self, buf: bytes) -> int:
        """Under self.lock: give the first reply in buf to the request it answers."""
        if self.protocol == "redis":
            used = redis_reply(buf)
        elif self.protocol == "text":
            if not self.awaiting:
                raise Unframeable("memcached replied to no request")
            used = text_reply(buf, self.awaiting[0].shape)
        else:
            fields, used = binary_packet(buf)
            # A quiet request the backend left unanswered (a miss) is done once a later one is answered.
            while self.awaiting and self.awaiting[0].quiet and (
                    self.awaiting[0].opaque != fields[7] or self.awaiting[0].opcode != fields[1]):
                self.awaiting.popleft().ready = True
            if self.awaiting and self.awaiting[0].opcode == BINARY_STAT and fields[2] != 0:
                self.awaiting[0].data += buf[:used]  # one of several STAT packets; the empty key ends them
                return used
        if not self.awaiting:
            raise Unframeable(f"{self.protocol} reply with no request waiting for it")
        entry = self.awaiting.popleft()
        entry.data += buf[:used]
        entry.ready = True
        return used


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()


class ErrorProxies(contextlib.ExitStack):
    """An ErrorProxy for Redis and one for memcached, and the settings that point a stack at them."""

    def __init__(self, settings: dict[str, str]):
        super().__init__()
        self.settings = settings
        self.by_name: dict[str, ErrorProxy] = {}

    def __enter__(self):
        super().__enter__()
        for name, prefix in (("redis", "REDIS"), ("memcache", "MEMCACHE")):
            upstream = (self.settings[f"{prefix}_HOST"], int(self.settings[f"{prefix}_PORT"]))
            self.by_name[name] = self.enter_context(ErrorProxy(name, upstream))
        return self

    def env(self) -> dict[str, str]:
        out = {}
        for name, prefix in (("redis", "REDIS"), ("memcache", "MEMCACHE")):
            p = self.by_name[name]
            out |= {f"{prefix}_HOST": p.host, f"{prefix}_PORT": str(p.port)}
        return out

    def __getitem__(self, name: str) -> ErrorProxy:
        return self.by_name[name]
