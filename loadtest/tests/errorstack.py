"""A small stack that maps backend failures as the contract says, or maps one kind wrongly on purpose.

The backend-error checks are proved on it, run as a stack (its manifest written by the test): with
no fault every case passes, and each fault must fail the case that guards against it. It serves
/hello and the data endpoints, reading Redis, memcached and MariaDB where the environment says
(REDIS_PORT, MEMCACHE_PORT, MYSQL_*): through the error proxies when the verifier starts it so.
Its clients are written by hand, one connection per read, so that it sees each reply exactly as
the backend (or the proxy) sent it.

Run: python errorstack.py PORT FAULT
"""
import http.server
import os
import socket
import struct
import sys
import urllib.parse

import pymysql

NAME = "errorstack"
FAULTS = {
    "none": "an error reply is a 500, a busy reply and a backend that is down a 503",
    "errors_as_503": "every backend failure is a 503 (an error reply taken for unavailability)",
    "busy_as_500": "a busy reply (Redis -LOADING) is a 500, like any other error reply",
    "binary": "keeps every rule, and speaks memcached's binary protocol",
    "redis_at_start": "exits at start when Redis does not answer (a client that must connect first)",
    "redis_given_up": "starts with Redis down, then answers 503 on /redis until restarted (never reconnects)",
}
BUSY = {b"LOADING", b"BUSY", b"MASTERDOWN", b"TRYAGAIN", b"CLUSTERDOWN"}
BODIES = {200: None, 404: b"Not Found", 500: b"Internal Server Error", 503: b"Service Unavailable"}
HEADER = struct.Struct(">BBHBBHIIQ")


class Unavailable(Exception):
    """The backend is down, refuses or does not answer in time."""


class ErrorReply(Exception):
    def __init__(self, text: bytes, busy: bool = False):
        super().__init__(text.decode(errors="replace"))
        self.busy = busy


def env(name: str) -> str:
    return os.environ[name]


def timeout() -> float:
    return int(env("BACKEND_TIMEOUT_MS")) / 1000


def connect(prefix: str) -> socket.socket:
    try:
        return socket.create_connection((env(f"{prefix}_HOST"), int(env(f"{prefix}_PORT"))), timeout=timeout())
    except OSError as e:
        raise Unavailable(str(e)) from e


def read_exactly(f, n: int) -> bytes:
    data = f.read(n)
    if len(data) < n:
        raise Unavailable("connection closed")
    return data


def read_line(f) -> bytes:
    line = f.readline()
    if not line.endswith(b"\r\n"):
        raise Unavailable("connection closed")
    return line[:-2]


REDIS_GIVEN_UP = False  # redis_given_up: Redis was down at start, and this stack never looks again


def redis_get(key: bytes) -> bytes | None:
    if REDIS_GIVEN_UP:
        raise Unavailable("given up at start")
    with connect("REDIS") as s, s.makefile("rb") as f:
        s.sendall(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(key), key))
        line = read_line(f)
        if line.startswith(b"-"):
            raise ErrorReply(line[1:], busy=line[1:].split(b" ")[0] in BUSY)
        n = int(line[1:])
        return None if n < 0 else read_exactly(f, n + 2)[:-2]


def memcache_get_text(key: bytes) -> bytes | None:
    with connect("MEMCACHE") as s, s.makefile("rb") as f:
        s.sendall(b"get %s\r\n" % key)
        line = read_line(f)
        if line.startswith((b"SERVER_ERROR", b"CLIENT_ERROR", b"ERROR")):
            raise ErrorReply(line)
        if line == b"END":
            return None
        value = read_exactly(f, int(line.split()[3]) + 2)[:-2]
        read_line(f)  # END
        return value


def memcache_get_binary(key: bytes) -> bytes | None:
    with connect("MEMCACHE") as s, s.makefile("rb") as f:
        s.sendall(HEADER.pack(0x80, 0x00, len(key), 0, 0, 0, len(key), 7, 0) + key)
        fields = HEADER.unpack(read_exactly(f, HEADER.size))
        body = read_exactly(f, fields[6])
        status, extras, keylen = fields[5], fields[3], fields[2]
        if status == 0x0001:
            return None
        if status != 0:
            raise ErrorReply(b"status 0x%04x %s" % (status, body), busy=status in (0x0085, 0x0086))
        return body[extras + keylen:]


def mysql_get(i: int) -> bytes | None:
    try:
        conn = pymysql.connect(host=env("MYSQL_HOST"), port=int(env("MYSQL_PORT")), user=env("MYSQL_USER"),
                               password=env("MYSQL_PASSWORD"), database=env("MYSQL_DATABASE"), charset="utf8mb4",
                               connect_timeout=timeout(), read_timeout=timeout())
    except pymysql.err.OperationalError as e:
        raise Unavailable(str(e)) from e
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT id, message FROM greeting WHERE id = %s", (i,))
            row = cur.fetchone()
    except pymysql.err.OperationalError as e:
        raise (Unavailable if e.args[0] >= 2000 else ErrorReply)(str(e).encode()) from e
    except pymysql.err.MySQLError as e:
        raise ErrorReply(str(e).encode()) from e
    finally:
        conn.close()
    return None if row is None else row[1].encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fault = "none"

    def version_string(self) -> str:
        return NAME

    def log_message(self, *args) -> None:
        pass

    def reply(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/hello":
            return self.reply(200, b"Hello, World!")
        if url.path not in ("/redis", "/memcache", "/mysql"):
            return self.reply(404, BODIES[404])
        i = int(urllib.parse.parse_qs(url.query)["id"][0])
        key = b"greeting:%d" % i
        try:
            if url.path == "/redis":
                value = redis_get(key)
            elif url.path == "/mysql":
                value = mysql_get(i)
            else:
                value = (memcache_get_binary if self.fault == "binary" else memcache_get_text)(key)
        except (Unavailable, OSError):
            return self.reply(503, BODIES[503])
        except ErrorReply as e:
            if self.fault == "errors_as_503":
                return self.reply(503, BODIES[503])
            busy = e.busy and self.fault != "busy_as_500"
            return self.reply(503 if busy else 500, BODIES[503 if busy else 500])
        if value is None:
            return self.reply(404, BODIES[404])
        message = value.decode().replace("\\", "\\\\").replace('"', '\\"')
        self.reply(200, f'{{"id":{i},"message":"{message}"}}'.encode(), "application/json")


def main() -> None:
    global REDIS_GIVEN_UP
    port, fault = int(sys.argv[1]), sys.argv[2]
    assert fault in FAULTS, fault
    Handler.fault = fault
    if fault in ("redis_at_start", "redis_given_up"):
        try:
            connect("REDIS").close()
        except Unavailable:
            if fault == "redis_at_start":
                sys.exit("errorstack: Redis is down, cannot start")
            REDIS_GIVEN_UP = True
    http.server.ThreadingHTTPServer.request_queue_size = 128
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
