#!/usr/bin/env python3
"""Regenerates greetings.tsv and cases.json, the contract's data and golden responses.

Both outputs are committed; tests check that running this again changes nothing.
Deterministic on purpose: ids map to words through SHA-256, never through `random`,
whose algorithms may change between Python versions.
"""
import hashlib
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
COUNT = 10_000
MAX_BYTES = 64

GREETINGS = [
    "Hello", "Bonjour", "¡Hola", "Grüß Gott", "Olá", "Ciao", "Cześć", "Hej",
    "Merhaba", "Xin chào", "你好", "こんにちは", "안녕하세요", "Привет", "Γειά σου",
    "שלום", "नमस्ते", "Sawubona", "Tere", "Ahoj",
]
NAMES = [
    "World", "Zoë", "José", "Ægir", "Łukasz", "Søren", "François", "Nuño",
    "小明", "さくら", "민준", "Дмитрий", "Ελένη", "Ada", "Grace", "Linus",
]
# Each suffix exercises a character that JSON encoders are known to treat differently.
SUFFIXES = [
    "", "", "", "!",
    ' "quoted"',          # must be escaped as \"
    " back\\slash",       # must be escaped as \\
    " a/b",               # must NOT be escaped as \/
    " <b>bold</b>",       # must NOT be escaped as \u003c (HTML-safe encoders do)
    " Tom & Jerry",       # must NOT be escaped as \u0026
    " 🎉",                # 4-byte UTF-8: breaks a utf8 (3-byte) MySQL path
    " 👋🏽",
    " café",
    " 'single'",
    " 50% off",
    " ½ ≠ ¼",
    " C:\\\"x\"",
]


def pick(digest: bytes, offset: int, seq: list[str]) -> str:
    return seq[int.from_bytes(digest[offset:offset + 2], "big") % len(seq)]


def message(i: int) -> str:
    d = hashlib.sha256(f"greeting:{i}".encode()).digest()
    base = f"{pick(d, 0, GREETINGS)}, {pick(d, 2, NAMES)}"
    tail = f" #{i}"
    msg = base + pick(d, 4, SUFFIXES) + tail
    if len(msg.encode()) > MAX_BYTES:
        msg = base + tail
    assert len(msg.encode()) <= MAX_BYTES and msg.isprintable(), (i, msg)
    return msg


def json_body(i: int, msg: str) -> str:
    escaped = msg.replace("\\", "\\\\").replace('"', '\\"')
    return f'{{"id":{i},"message":"{escaped}"}}'


TEXT = "text/plain; charset=utf-8"
JSON = "application/json"


def expect(status: int, body: str, ctype: str = TEXT, extra: dict | None = None, head: bool = False) -> dict:
    headers = {"content-length": str(len(body.encode())), "content-type": ctype}
    headers.update(extra or {})
    return {"status": status, "headers": dict(sorted(headers.items())), "body": "" if head else body}


ERR = {
    400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
    500: "Internal Server Error", 503: "Service Unavailable",
}


def error(status: int, head: bool = False) -> dict:
    extra = {"allow": "GET, HEAD"} if status == 405 else None
    return expect(status, ERR[status], extra=extra, head=head)


def case(name, method, target, exp, reads=None):
    return {"name": name, "method": method, "target": target, "expect": exp,
            "reads": reads or {}}


def showcase_ids(messages: dict[int, str]) -> list[int]:
    """The first id whose message carries each tricky character, plus both ends of the range."""
    wanted = ['"', "\\", '\\"', "/", "<", "&", "🎉", "👋", "é", "你", "こ", "Д"]
    ids = {1, COUNT}
    for ch in wanted:
        ids.add(next(i for i, m in messages.items() if ch in m))
    return sorted(ids)


def build_cases(messages: dict[int, str]) -> list[dict]:
    cases = [
        case("hello", "GET", "/hello", expect(200, "Hello, World!")),
        case("hello HEAD", "HEAD", "/hello", expect(200, "Hello, World!", head=True)),
        case("hello ignores query", "GET", "/hello?x=1", expect(200, "Hello, World!")),
        case("sleep", "GET", "/sleep", expect(200, "Slept 10 ms")),
        case("sleep HEAD", "HEAD", "/sleep", expect(200, "Slept 10 ms", head=True)),
        case("unknown path", "GET", "/nope", error(404)),
        case("root", "GET", "/", error(404)),
        case("trailing slash", "GET", "/hello/", error(404)),
        case("case-sensitive path", "GET", "/Hello", error(404)),
        case("unknown path HEAD", "HEAD", "/nope", error(404, head=True)),
        case("POST hello", "POST", "/hello", error(405)),
        case("PUT sleep", "PUT", "/sleep", error(405)),
        case("DELETE hello", "DELETE", "/hello", error(405)),
    ]
    for ep in ("redis", "mysql", "memcache"):
        one = {ep: 1}
        for i in showcase_ids(messages):
            body = json_body(i, messages[i])
            cases.append(case(f"{ep} id={i}", "GET", f"/{ep}?id={i}", expect(200, body, JSON), one))
        body = json_body(42, messages[42])
        cases += [
            case(f"{ep} HEAD", "HEAD", f"/{ep}?id=42", expect(200, body, JSON, head=True), one),
            case(f"{ep} other params ignored", "GET", f"/{ep}?x=1&id=42&y=", expect(200, body, JSON), one),
            case(f"{ep} percent-encoded id", "GET", f"/{ep}?id=%34%32", expect(200, body, JSON), one),
            case(f"{ep} missing row", "GET", f"/{ep}?id={COUNT + 1}", error(404), one),
            case(f"{ep} missing row, 9 digits", "GET", f"/{ep}?id=999999999", error(404), one),
            case(f"{ep} POST", "POST", f"/{ep}?id=1", error(405)),
            case(f"{ep} trailing slash", "GET", f"/{ep}/?id=1", error(404)),
        ]
        bad = {
            "missing": "", "empty": "?id=", "abc": "?id=abc", "negative": "?id=-1",
            "plus sign": "?id=%2B1", "literal plus": "?id=+1", "leading zero": "?id=007", "zero": "?id=0",
            "exponent": "?id=1e3", "ten digits": "?id=1234567890", "repeated": "?id=1&id=2",
            "space": "?id=1%20", "bad percent": "?id=%zz", "other name": "?ID=1",
        }
        for label, query in bad.items():
            cases.append(case(f"{ep} 400 {label}", "GET", f"/{ep}{query}", error(400)))
    return cases


def main() -> None:
    messages = {i: message(i) for i in range(1, COUNT + 1)}
    tsv = "".join(f"{i}\t{m}\n" for i, m in messages.items())
    (HERE / "greetings.tsv").write_text(tsv, encoding="utf-8")
    doc = {"version": 1, "greetings": COUNT, "cases": build_cases(messages)}
    (HERE / "cases.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
