"""The one endpoint runner both runs use (bench/endpoint.py), driven by a fake `Where` that records
what it was asked: every load follows a settle, the backend's ceiling comes right after the
headline and only for data endpoints, the open loop at fractions of the headline's peak."""
from types import SimpleNamespace

import pytest

from harness.bench import endpoint
from harness.bench.settings import Settings


class FakeWhere:
    def __init__(self, s, rates, oha=True):
        self.s, self.doc, self.rates, self.oha, self.calls, self.lines = s, {"ceilings": []}, rates, oha, [], []

    def settle(self, stack):
        self.calls.append("settle")
        return 0.25

    def load_closed(self, stack, endpoint_, connections, duration, raw_name):
        self.calls.append(f"closed c={connections} {raw_name}")
        return {"kind": "closed", "connections": connections, "throughput_rps": self.rates[connections],
                "latency_ms": {"p99": 1.0}, "flags": []}

    def load_open(self, stack, endpoint_, rate, connections, raw_name):
        self.calls.append(f"open {rate:.0f} c={connections}")
        return {"kind": "open", "connections": connections, "throughput_rps": rate, "achieved_fraction": 1.0,
                "latency_ms": {"p99": 2.0}, "flags": []}

    def adjacent_ceiling(self, stack, endpoint_, connections):
        self.calls.append(f"ceiling c={connections}")
        return {"endpoint": endpoint_, "connections": connections, "throughput_rps": 9000.0}

    def open_loop_unavailable(self):
        return None if self.oha else "oha not installed (make setup)"

    def tell(self, planned_s, line):
        self.lines.append(line)

    def origin(self, record):
        return "here "


STACK = SimpleNamespace(name="demo")


def settings(**kw):
    return Settings(concurrency=[16, 64], repeats=2, open_rates=[0.5], **kw)


def test_every_load_follows_a_settle_and_the_ceiling_follows_the_headline():
    where = FakeWhere(settings(), {16: 1000.0, 64: 4000.0})
    out = endpoint.measure(where, STACK, "redis")
    assert where.calls == ["settle", "closed c=16 demo-redis-c16.txt", "settle", "closed c=64 demo-redis-c64.txt",
                           "settle", "closed c=64 demo-redis-c64-repeat1.txt",
                           "settle", "ceiling c=64",
                           "settle", "open 2000 c=64"]
    assert out["adjacent_ceiling"]["throughput_rps"] == 9000.0
    assert [r["settle_s"] for r in out["sweep"] + out["repeats"] + out["open_loop"]] == [0.25] * 4
    assert out["open_loop"][0]["fraction_of_peak"] == 0.5
    assert all("here" in line for line in where.lines) and len(where.lines) == 4


@pytest.mark.parametrize("endpoint_name, kw", [("hello", {}), ("redis", {"calibrate": False})])
def test_no_ceiling_for_hello_nor_without_calibration(endpoint_name, kw):
    where = FakeWhere(settings(**kw), {16: 1000.0, 64: 4000.0})
    out = endpoint.measure(where, STACK, endpoint_name)
    assert "adjacent_ceiling" not in out and not any(c.startswith("ceiling") for c in where.calls)


def test_without_oha_the_open_loop_says_why_and_without_a_peak_it_is_left_out():
    where = FakeWhere(settings(), {16: 1000.0, 64: 4000.0}, oha=False)
    out = endpoint.measure(where, STACK, "hello")
    assert out["open_loop"] == [{"kind": "open", "fraction_of_peak": 0.5, "skipped": "oha not installed (make setup)"}]
    where = FakeWhere(settings(), {16: None, 64: None})
    out = endpoint.measure(where, STACK, "hello")
    assert out["open_loop"] == [] and not any(c.startswith("open") for c in where.calls)
