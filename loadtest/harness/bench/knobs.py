"""A stack's knobs on the command line (`A='VAR=value ...'`): parsed, shown again, and checked against the stack's files."""
import os
import pathlib
import re
import shlex

from harness import stacks
from harness.config import settings as contract_settings
from harness.contract.cases import ENDPOINTS

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


SET_BY_HARNESS = {"PORT", "STACK_NAME", "RUN_DIR"}  # stacks.Stack.env() overrides these whatever a side says


NOT_SOURCE = {"node_modules", "target", "vendor", "build", ".git", "__pycache__"}


class Usage(ValueError):
    """Bad input: said plainly, nothing started."""


def parse_env(text: str, side: str) -> dict[str, str]:
    """'VAR=value OTHER="a b"' (shell quoting) -> {VAR: value, OTHER: a b}; empty = the stack's defaults."""
    try:
        words = shlex.split(text or "")
    except ValueError as e:
        raise Usage(f"{side}={text!r}: {e}") from None
    out: dict[str, str] = {}
    for word in words:
        name, eq, value = word.partition("=")
        if not eq or not NAME.match(name):
            raise Usage(f"{side}: {word!r} is not VAR=value (a variable name, '=', its value)")
        if name in SET_BY_HARNESS:
            raise Usage(f"{side}: {name} is set by the harness for every start and cannot be A/B-tested")
        if name in out:
            raise Usage(f"{side}: {name} is given twice")
        out[name] = value
    return out


def env_text(env: dict[str, str]) -> str:
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())


def number(env, key: str, kind, default, low):
    """env[key] as `kind` (default when unset or empty), at least `low`; Usage when it is not."""
    raw = (env.get(key) or "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise Usage(f"{key}={raw!r} is not a number") from None
    if value < low:
        raise Usage(f"{key}={raw}: at least {low}")
    return value


def unread_knobs(stack: stacks.Stack, env: dict) -> list[str]:
    """Names that appear nowhere in the stack's own files nor in the contract's defaults: typos,
    which would measure the defaults twice and call it noise, unless a runtime reads them itself
    (JAVA_TOOL_OPTIONS, NODE_OPTIONS): so a warning, not a refusal."""
    known = set(contract_settings())
    wanted = {n for n in env if n not in known}
    for path in _source_files(pathlib.Path(stack.dir)):
        if not wanted:
            break
        try:
            text = path.read_text(errors="ignore")
        except OSError:
            continue
        wanted = {n for n in wanted if n not in text}
    return sorted(wanted)


def _source_files(root: pathlib.Path):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in NOT_SOURCE]
        for name in filenames:
            path = pathlib.Path(dirpath, name)
            try:
                if path.stat().st_size <= 1 << 20:
                    yield path
            except OSError:
                continue


def one_stack_and_endpoint(env) -> tuple[str, str]:
    """STACK and ENDPOINT of a command that measures one of each (make ab, make soak)."""
    stack = (env.get("STACK") or "").strip()
    endpoint = (env.get("ENDPOINT") or "").strip().lstrip("/")
    if not stack or "," in stack:
        raise Usage("STACK=<one stack> is required (see make list)")
    if endpoint not in ENDPOINTS:
        raise Usage(f"ENDPOINT={endpoint!r}: one of {', '.join(ENDPOINTS)}")
    return stack, endpoint
