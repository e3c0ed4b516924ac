"""An endpoint's golden cases proved on a running stack before it is measured (make ab, make soak): a side that breaks the contract is refused."""
import urllib.parse

from harness import contract, stacks, verify
from harness.contract.checking import Target


class Refused(RuntimeError):
    """A side that cannot be measured honestly (it does not start, or breaks the contract)."""


def golden_cases(endpoint: str) -> list[contract.Case]:
    """The contract's cases for one endpoint's path (with or without a trailing slash, any method)."""
    return [c for c in contract.cases() if urllib.parse.urlsplit(c.target).path.rstrip("/") == f"/{endpoint}"]


def prove(stack: stacks.Stack, endpoint: str, cases: list, said: str) -> str:
    """The endpoint's golden cases, byte for byte with their backend reads (verify's own check);
    Refused when one fails: a configuration that breaks the contract is not measured."""
    target = Target(stack.name, stack.host, stack.port)
    checks = verify.check_cases(target, cases)
    bad = [c for c in checks if not c.ok and not c.skipped]
    if bad:
        raise Refused(f"{said} breaks the contract on /{endpoint}, so it is not measured: "
                      + "; ".join(f"{c.name}: {c.detail}" for c in bad))
    return f"{len(cases)} golden cases of /{endpoint} passed"
