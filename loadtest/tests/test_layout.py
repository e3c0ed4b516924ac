"""The harness's layout holds: no import cycle between its modules nor between its packages, and
every package says in its docstring what it owns. Read from the source (ast), nothing imported."""
import ast
import pathlib

import pytest

HARNESS = pathlib.Path(__file__).resolve().parents[1] / "harness"


def modules() -> dict[str, pathlib.Path]:
    out = {}
    for p in HARNESS.rglob("*.py"):
        parts = list(p.relative_to(HARNESS.parent).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def imports(name: str, path: pathlib.Path, known: set[str]) -> set[str]:
    """The harness modules `name` imports (`from harness.x import y`: harness.x.y when that is a module)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).rstrip(".")
            else:
                base = node.module or ""
            for alias in node.names:
                out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in known and m != name}


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (HARNESS / parts[1]).is_dir() else None


def test_no_module_imports_itself_back():
    assert cycles(graph()) == []


def test_no_package_imports_itself_back():
    edges: dict[str, set[str]] = {}
    for module, deps in graph().items():
        a = package_of(module)
        for dep in deps:
            b = package_of(dep)
            if a and b and a != b:
                edges.setdefault(a, set()).add(b)
    assert cycles(edges) == []


@pytest.mark.parametrize("package", sorted(p.name for p in HARNESS.iterdir() if (p / "__init__.py").exists()))
def test_every_package_says_what_it_owns(package):
    assert ast.get_docstring(ast.parse((HARNESS / package / "__init__.py").read_text())), package


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
