"""The docs test: budgets, the stack README's shape, Tuning evidence, relative links, generated figure
blocks and tracker numbers, checked over a checkout. `python -m harness.docs.check [--root DIR]`."""
import argparse
import dataclasses
import pathlib
import re
import sys
import urllib.parse

from harness.config import ROOT
from harness.docs import figures, published
from harness.docs.files import markdown_files, project_files

STACK_README_BUDGET = 20 * 1024
TOP_README_BUDGET = 16 * 1024
# ../shared/STACK-README.md: the sections of a stack README, in order (each H2 is matched by its start).
STACK_SECTIONS = ("Versions", "Run", "Code map", "How a request flows", "Tuning", "Protocol hygiene",
                  "Workarounds", "Benchmark-only settings", "Figures", "Limits")
NOT_MEASURED = "not re-measured"
# A number of this project's tracker, which means nothing to a reader: the word issue or task, then a number,
# or a number behind # in brackets. An upstream link (.../issues/17) has no space before its number.
TRACKER = re.compile(r"\b(?:issue|task)s?\s+#?\d+\b|\(#\d+\)", re.I)
TEXT_SUFFIXES = {".md", ".py", ".java", ".php", ".js", ".cjs", ".mjs", ".ts", ".toml", ".sh", ".conf", ".ini",
                 ".properties", ".xml", ".yml", ".yaml", ".json", ".lua", ".sql", ".env", ".txt", ".html", ".cfg"}
TEXT_NAMES = {"Makefile", "run", ".gitignore"}
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")  # [name]: target, a reference-style link's definition


@dataclasses.dataclass(frozen=True)
class Problem:
    path: str
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.message}"


def _is_text(p: pathlib.Path) -> bool:
    return (p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES) and p.stat().st_size < 2_000_000


def prose_lines(text: str):
    """(line number, line) of the Markdown outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*(```|~~~)", line)
        if m:
            fence = None if fence == m[1] else (fence or m[1])
            continue
        if fence is None:
            yield n, line


def headings(text: str) -> list[tuple[int, int, str]]:
    """(line, level, text) of every ATX heading outside code."""
    out = []
    for n, line in prose_lines(text):
        m = re.match(r"(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            out.append((n, len(m[1]), m[2]))
    return out


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text without Markdown, lower case, punctuation dropped,
    spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, _, h in headings(text):
        s = slug(h)
        if s in seen:
            seen[s] += 1
            out.add(f"{s}-{seen[s]}")
        else:
            seen[s] = 0
            out.add(s)
    out |= set(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", text))
    return out


def stack_dirs(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p.parent for p in root.glob("*/stack.toml"))


def rel(root: pathlib.Path, p: pathlib.Path) -> str:
    return str(p.relative_to(root))


# ---------------------------------------------------------------- the rules

def check_budgets(root: pathlib.Path) -> list[Problem]:
    out = []
    for d in stack_dirs(root):
        readme = d / "README.md"
        if readme.exists() and (size := readme.stat().st_size) > STACK_README_BUDGET:
            out.append(Problem(rel(root, readme), 1, "budget", f"{size:,} bytes, over the stack README's {STACK_README_BUDGET:,}"))
    top = root / "README.md"
    if top.exists() and (size := top.stat().st_size) > TOP_README_BUDGET:
        out.append(Problem("README.md", 1, "budget", f"{size:,} bytes, over the top README's {TOP_README_BUDGET:,}"))
    return out


def _section_of(title: str) -> int | None:
    t = title.strip().lower()
    for i, name in enumerate(STACK_SECTIONS):
        if t.startswith(name.lower()):
            return i
    return None


def check_shape(root: pathlib.Path) -> list[Problem]:
    out = []
    for d in stack_dirs(root):
        readme = d / "README.md"
        where = rel(root, readme)
        if not readme.exists():
            out.append(Problem(where, 1, "shape", "missing: every stack has a README"))
            continue
        hs = headings(readme.read_text())
        h1 = [h for h in hs if h[1] == 1]
        if not h1 or not h1[0][2].startswith(f"{d.name}:"):
            out.append(Problem(where, h1[0][0] if h1 else 1, "shape", f"the title is `# {d.name}: <framework> <version>`"))
        found = [(n, _section_of(t), t) for n, level, t in hs if level == 2]
        known = [(n, i, t) for n, i, t in found if i is not None]
        for i, name in enumerate(STACK_SECTIONS):
            if not any(k == i for _, k, _ in known):
                out.append(Problem(where, 1, "shape", f"section '## {name}' is missing"))
        for (n1, i1, t1), (n2, i2, t2) in zip(known, known[1:]):
            if i2 <= i1:
                out.append(Problem(where, n2, "shape", f"section '## {t2}' is out of order: the shape puts "
                                                       f"'{STACK_SECTIONS[i2]}' before '{STACK_SECTIONS[i1]}'"))
                break  # the first is enough: one misplaced section would otherwise be named twice
    return out


def _section_lines(text: str, name: str) -> list[tuple[int, str]]:
    lines, inside = [], False
    for n, line in prose_lines(text):
        if re.match(r"##\s", line):
            inside = _section_of(line[2:].strip()) == STACK_SECTIONS.index(name)
            continue
        if inside:
            lines.append((n, line))
    return lines


def table_rows(lines: list[tuple[int, str]]) -> list[tuple[int, list[str]]]:
    """The body rows of the Markdown tables in `lines` (header and separator rows dropped)."""
    rows, previous_was_table = [], False
    for n, line in lines:
        s = line.strip()
        if not s.startswith("|"):
            previous_was_table = False
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", s.strip("|"))]
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cells if c):
            previous_was_table = True
            continue
        if previous_was_table:
            rows.append((n, cells))
    return rows


def check_tuning(root: pathlib.Path) -> list[Problem]:
    out = []
    for d in stack_dirs(root):
        readme = d / "README.md"
        if not readme.exists():
            continue
        for n, cells in table_rows(_section_lines(readme.read_text(), "Tuning")):
            evidence = cells[-1]
            linked = [t for t in LINK.findall(evidence) if re.search(r"(^|/)tuning/[^/]+\.json$", t.split("#")[0])]
            if any((d / t.split("#")[0]).is_file() for t in linked):
                continue
            if NOT_MEASURED in evidence.lower():
                continue
            out.append(Problem(rel(root, readme), n, "tuning",
                               f"the evidence cell of '{cells[0]}' neither links an existing tuning/*.json nor says '{NOT_MEASURED}'"))
    return out


def check_links(root: pathlib.Path) -> list[Problem]:
    out = []
    cache: dict[pathlib.Path, set[str]] = {}
    for md in markdown_files(root):
        text = md.read_text()
        for n, line in prose_lines(text):
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)) + REFERENCE.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
                    continue  # a URL
                path_part, _, anchor = target.partition("#")
                path_part = urllib.parse.unquote(path_part)
                dest = (md.parent / path_part).resolve() if path_part else md
                if not dest.exists():
                    out.append(Problem(rel(root, md), n, "link", f"{target}: no such file"))
                    continue
                if anchor and dest.suffix == ".md" and dest.is_file():
                    if dest not in cache:
                        cache[dest] = anchors(dest.read_text())
                    if urllib.parse.unquote(anchor).lower() not in cache[dest]:
                        out.append(Problem(rel(root, md), n, "link", f"{target}: no heading gives #{anchor}"))
    return out


def check_blocks(root: pathlib.Path) -> list[Problem]:
    out = []
    runs = published.runs(root)
    for md in figures.with_blocks(root):
        text = md.read_text()
        for m in figures.BLOCK.finditer(text):
            want = figures.expected(root, md, m["kind"], runs)
            if m["body"].rstrip("\n") != want:
                n = text[:m.start()].count("\n") + 1
                out.append(Problem(rel(root, md), n, "figures",
                                   f"the generated {m['kind']} block differs from what the newest published run gives "
                                   f"(`make publish` with no RUN regenerates every block)"))
    return out


def check_tracker_numbers(root: pathlib.Path) -> list[Problem]:
    out = []
    for p in project_files(root):
        if not _is_text(p) or p.parts[len(root.parts):][:1] == (published.DIR,):
            continue  # a published run's files are what the run wrote
        try:
            text = p.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for m in TRACKER.finditer(line):
                out.append(Problem(rel(root, p), n, "tracker", f"'{m[0]}' names a tracker number: say what the thing is"))
    return out


RULES = (check_budgets, check_shape, check_tuning, check_links, check_blocks, check_tracker_numbers)


def check(root: pathlib.Path) -> list[Problem]:
    return [p for rule in RULES for p in rule(root)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.docs.check", description=__doc__)
    ap.add_argument("--root", type=pathlib.Path, default=ROOT, help="the checkout to check (default: this one)")
    args = ap.parse_args(argv)
    problems = check(args.root.resolve())
    for p in problems:
        print(p)
    print(f"docs: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
