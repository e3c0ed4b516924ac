"""`make new-stack NAME=x`: a new stack directory from the templates in loadtest/skeleton/.

The skeleton is a manifest on the next free port, a README with the sections every stack's README
has, a .gitignore for build output, and a placeholder server (Python's standard library, so that
it runs wherever the harness does) answering `/hello` and 404 for the rest: `make verify STACK=x`
then runs at once and lists what is left.
"""
import os
import re
import string

from harness import ports, stacks
from harness.config import ROOT, settings
from harness.docs import figures, published

TEMPLATES = ROOT / "loadtest" / "skeleton"
# template file -> the file it becomes; `.tmpl` files have ${name} and ${port} filled in
FILES = {"stack.toml.tmpl": "stack.toml", "README.md.tmpl": "README.md", "NOTES.md.tmpl": "NOTES.md",
         "gitignore": ".gitignore", "server.py": "server.py"}
NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
NAME_MAX = 40
FIRST_PORT = 18001


class SkeletonError(ValueError):
    pass


def check_name(name: str, root=None) -> None:
    root = root or ROOT
    if not name:
        raise SkeletonError("usage: make new-stack NAME=<name>, for example NAME=go-nethttp")
    if len(name) > NAME_MAX or not NAME.match(name):
        raise SkeletonError(f"'{name}' is not a stack name: lower-case letters, digits and single hyphens, "
                            f"starting with a letter, at most {NAME_MAX} characters (it is the directory "
                            f"and the Server header), for example go-nethttp")
    taken = root / name
    if (taken / stacks.MANIFEST).exists():
        raise SkeletonError(f"'{name}' is already a stack ({taken / stacks.MANIFEST})")
    if taken.exists():
        raise SkeletonError(f"'{name}' is taken: {taken} already exists")




def next_port(root=None, host: str | None = None) -> int:
    """The first port after the highest any stack's manifest claims that nothing listens on here."""
    host = host or settings()["HOST"]
    claimed = {s.port for s in stacks.discover(root or ROOT)}
    port = max(claimed, default=FIRST_PORT - 1) + 1
    while port in claimed or ports.listening(host, port):
        port += 1
    if port > 65535:
        raise SkeletonError("no free port above the stacks' highest; set port in the new stack.toml by hand")
    return port


def create(name: str, root=None, host: str | None = None) -> tuple[os.PathLike, int]:
    """Write the skeleton of stack `name` under `root` (the repository); (its directory, its port)."""
    root = root or ROOT
    check_name(name, root)
    port = next_port(root, host)
    target = root / name
    target.mkdir()
    for template, written in FILES.items():
        text = (TEMPLATES / template).read_text()
        if template.endswith(".tmpl"):
            text = string.Template(text).substitute(name=name, port=port)
        (target / written).write_text(text)
    stacks.parse(target / stacks.MANIFEST)  # what was written must be a manifest the harness accepts
    readme = target / "README.md"  # its figure block as the docs test expects it now
    readme.write_text(figures.render(root, readme, readme.read_text(), published.runs(root)))
    return target, port
