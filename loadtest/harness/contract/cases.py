"""The contract's data and golden cases, read from shared-schema/ (never restated here)."""
import functools
import importlib.util
import json
from dataclasses import dataclass

from harness.config import SCHEMA, SERVICES

ENDPOINTS = ("hello", "redis", "mysql", "memcache", "sleep")
DATA_ENDPOINTS = SERVICES  # each data endpoint is named after its backend (CONTRACT.md)


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    target: str
    status: int
    headers: dict  # lower-case name -> value, leaving out Date/Server/Connection/Keep-Alive
    body: bytes
    reads: dict  # backend -> number of reads the request must cause

    def golden(self) -> dict:
        return {"status": self.status, "headers": self.headers, "body": self.body}


@functools.cache
def greetings() -> dict[int, str]:
    out = {}
    for line in (SCHEMA / "greetings.tsv").read_text(encoding="utf-8").splitlines():
        key, _, message = line.partition("\t")
        out[int(key)] = message
    return out


@functools.cache
def cases() -> list[Case]:
    doc = json.loads((SCHEMA / "cases.json").read_text(encoding="utf-8"))
    return [
        Case(c["name"], c["method"], c["target"], c["expect"]["status"], c["expect"]["headers"],
             c["expect"]["body"].encode(), c["reads"])
        for c in doc["cases"]
    ]


def case(name: str) -> Case:
    return next(c for c in cases() if c.name == name)


@functools.cache
def generator():
    """shared-schema/generate.py, the one definition of the JSON body and of the cases."""
    spec = importlib.util.spec_from_file_location("contract_generate", SCHEMA / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def json_body(i: int, message: str) -> bytes:
    return generator().json_body(i, message).encode()


def error(status: int) -> dict:
    """The golden normalized response of an error status, for errors no case can provoke (503)."""
    golden = generator().error(status)
    return {**golden, "body": golden["body"].encode()}


def schema_sql() -> str:
    return (SCHEMA / "schema.sql").read_text()
