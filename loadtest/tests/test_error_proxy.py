"""The error proxy frames each protocol and keeps replies in order; the backend-error checks pass a
stack that maps errors as the contract says and fail one that maps one kind wrongly."""
import pathlib
import socket
import struct
import sys

import pymemcache.client.base
import pytest
import redis

from harness import contract, stacks, verify
from harness.config import settings
from harness.ports import free_port
from harness.verify import error_proxy

pytestmark = pytest.mark.e2e  # real servers, services or load: `pytest -m "not e2e"` leaves them out

GREETINGS = contract.greetings()
ERRORSTACK = pathlib.Path(__file__).with_name("errorstack.py")


@pytest.fixture
def proxies(services_up):
    with error_proxy.ErrorProxies(settings()) as p:
        yield p


def test_redis_transparent_then_errors_only_the_reads_in_order(proxies):
    proxy = proxies["redis"]
    r = redis.Redis(host=proxy.host, port=proxy.port, socket_timeout=5)
    assert r.get("greeting:1") == GREETINGS[1].encode()
    with proxy.answering("error"):
        pipe = r.pipeline(transaction=False)
        pipe.set("error-proxy:x", "1").get("greeting:2").get("error-proxy:x").ping().mget("error-proxy:x", "greeting:3")
        out = pipe.execute(raise_on_error=False)
    assert out[0] is True and out[3] is True, out
    assert all(isinstance(e, redis.ResponseError) and "injected" in str(e) for e in (out[1], out[2])), out
    assert out[4] == [b"1", GREETINGS[3].encode()], out  # MGET is not GET: passed on, in its place
    assert proxy.answered == {"redis": 2} and proxy.shown() == "2 reads answered -ERR"
    with proxy.answering("busy"), pytest.raises(redis.BusyLoadingError):
        redis.Redis(host=proxy.host, port=proxy.port, socket_timeout=5, retry_on_error=[]).get("greeting:4")
    assert r.get("greeting:4") == GREETINGS[4].encode()  # transparent again
    assert proxy.problems == []
    r.close()


def test_memcached_text(proxies):
    proxy = proxies["memcache"]
    m = pymemcache.client.base.Client((proxy.host, proxy.port), timeout=5)
    assert m.get("greeting:5") == GREETINGS[5].encode()
    assert set(m.get_many(["greeting:6", "greeting:7", "no-such-key"])) == {"greeting:6", "greeting:7"}
    with proxy.answering("error"):
        with pytest.raises(pymemcache.exceptions.MemcacheServerError, match="injected"):
            m.get("greeting:5")
        assert m.set("error-proxy:y", b"2", noreply=False) is True  # not a read: passed on
        m.set("error-proxy:z", b"3", noreply=True)
        assert m.version()
    assert m.get_many(["error-proxy:y", "error-proxy:z"]) == {"error-proxy:y": b"2", "error-proxy:z": b"3"}
    assert proxy.shown() == "1 read answered SERVER_ERROR (text protocol)" and proxy.problems == []
    m.close()


def binary(op: int, key: bytes, opaque: int) -> bytes:
    return error_proxy.HEADER.pack(0x80, op, len(key), 0, 0, 0, len(key), opaque, 0) + key


def read_binary(f) -> tuple[int, int, int, bytes]:
    fields = error_proxy.HEADER.unpack(f.read(24))
    body = f.read(fields[6])
    return fields[1], fields[5], fields[7], body


def test_memcached_binary_quiet_misses_and_statuses(proxies):
    proxy = proxies["memcache"]
    with socket.create_connection((proxy.host, proxy.port), timeout=5) as s, s.makefile("rb") as f:
        # a quiet GET that misses gets no reply at all: the GET behind it must still get its own
        s.sendall(binary(0x09, b"no-such-key", 1) + binary(0x00, b"greeting:8", 2))
        op, status, opaque, body = read_binary(f)
        assert (op, status, opaque) == (0x00, 0, 2) and body[4:] == GREETINGS[8].encode()
        with proxy.answering("error"):
            s.sendall(binary(0x00, b"greeting:8", 3) + binary(0x0a, b"", 4))  # GET, NOOP
            assert read_binary(f)[:3] == (0x00, 0x0084, 3)
            assert read_binary(f)[:3] == (0x0a, 0, 4)
        with proxy.answering("busy"):
            s.sendall(binary(0x0c, b"greeting:9", 5))  # GETK
            assert read_binary(f)[:3] == (0x0c, 0x0085, 5)
    assert proxy.shown() == "1 read answered status 0x0085 (binary protocol)" and proxy.problems == []


def test_what_it_cannot_frame_closes_the_connection_and_says_why(proxies):
    proxy = proxies["memcache"]
    with socket.create_connection((proxy.host, proxy.port), timeout=5) as s:
        s.sendall(b"mg greeting:1 v\r\n")
        assert s.recv(100) == b""
    assert proxy.problems == ["memcache: memcached's meta command 'mg' (not framed here)"]


def errorstack(tmp_path, fault: str) -> stacks.Stack:
    d = tmp_path / "errorstack"
    d.mkdir()
    port = free_port("127.0.0.1")
    (d / "stack.toml").write_text(
        f'name = "errorstack"\nlanguage = "Python"\nframework = "http.server"\nport = {port}\nbuild = "true"\n'
        f'run = "exec {sys.executable} {ERRORSTACK} $PORT {fault}"\n')
    return stacks.parse(d / "stack.toml")


LABELS = [c.label for c in verify.BACKEND_ERROR_CASES]


@pytest.mark.parametrize("fault, failing", [
    ("none", []),
    ("binary", []),
    ("errors_as_503", [LABELS[0], LABELS[2], LABELS[3]]),
    ("busy_as_500", [LABELS[1]]),
])
def test_backend_error_cases_pass_only_the_contracts_mapping(services_up, tmp_path, capsys, fault, failing):
    """The whole path of `make verify`: the stack started again behind the error proxies, each case."""
    ok, results = verify.verify_stack(errorstack(tmp_path, fault), build_first=False,
                                      checks=[verify.check_backend_errors])
    out = capsys.readouterr().out
    assert "started again, Redis and memcached behind the error proxies" in out, out
    assert [c.name for c in results] == LABELS, out
    assert [c.name for c in results if not c.ok] == failing, out
    assert ok is (not failing)
    for c in results:
        if c.name in failing:
            wrong = 500 if fault == "busy_as_500" else 503
            assert f"status {wrong}, expected" in c.detail, c.detail
    memcached = results[2].detail
    if fault == "binary":
        assert "reads answered status 0x0084 (binary protocol)" in memcached, memcached
    elif fault == "none":
        assert "reads answered SERVER_ERROR (text protocol)" in memcached, memcached


@pytest.mark.parametrize("fault, failing, says", [
    ("none", [], ""),
    ("redis_at_start", ["start with redis down"], "did not start"),
    ("redis_given_up", ["start with redis down"], "after redis came back"),
])
def test_a_stack_must_start_with_any_backend_down_and_recover(services_up, tmp_path, fault, failing, says):
    ok, results = verify.verify_stack(errorstack(tmp_path, fault), build_first=False,
                                      checks=[verify.check_start_with_backend_down])
    assert [c.name for c in results] == ["start with redis down", "start with mysql down", "start with memcache down"]
    assert [c.name for c in results if not c.ok] == failing and ok is (not failing)
    for c in results:
        if c.name in failing:
            assert says in c.detail, c.detail
