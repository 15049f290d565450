#!/usr/bin/python3
"""config_docs.py - keep docs/config.md's field tables equal to the schema.

Every field table in docs/config.md stands between markers

    <!-- schema:PORT begin -->
    | Field | Accepted | Default | Meaning |
    ...
    <!-- schema:PORT end -->

and is the block `rocelab-switch --config-schema` prints for that table
(lib/config/schema.hpp; each table's descriptor is in lib/config/tables/).
The prose around the blocks is written by hand.

  tools/config_docs.py --check [--switch BIN] [--docs FILE]
      exit 0 when every block of the schema is in the docs exactly once and
      equal, and the docs have no block the schema lacks; else print what
      differs (a diff per block) and exit 1.
  tools/config_docs.py --write [--switch BIN] [--docs FILE]
      replace each block in the docs by the schema's. A table the docs do
      not have a block for yet is an error: place its markers first.

BIN defaults to $ROCELAB_BUILD/app/rocelab-switch (ROCELAB_BUILD defaults to
./build); FILE to docs/config.md. To change a table's docs, edit its
descriptor, rebuild, and run --write.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"^<!-- schema:(?P<name>[A-Za-z0-9_|]+) begin -->\n(?P<body>.*?)^<!-- schema:(?P=name) end -->\n",
                   re.M | re.S)


def blocks(text):
    """[(name, whole block text, start, end)] in order of appearance."""
    return [(m.group("name"), m.group(0), m.start(), m.end()) for m in BLOCK.finditer(text)]


def stray_markers(text):
    """Marker lines that are not part of a well-formed block."""
    inside = set()
    for _, _, start, end in blocks(text):
        inside.update(range(start, end))
    out = []
    for m in re.finditer(r"^<!-- schema:.*$", text, re.M):
        if m.start() not in inside:
            out.append(text.count("\n", 0, m.start()) + 1)
    return out


def schema_text(binary):
    try:
        r = subprocess.run([binary, "--config-schema"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        sys.exit(f"config_docs: cannot run {binary}: {e} (build it, or give --switch)")
    if r.returncode != 0:
        sys.exit(f"config_docs: {binary} --config-schema exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def compare(schema, docs, docs_name):
    """Problems as a list of strings (empty: the docs match)."""
    problems = []
    want = {}
    for name, text, _, _ in blocks(schema):
        want[name] = text
    seen = {}
    for name, text, start, _ in blocks(docs):
        line = docs.count("\n", 0, start) + 1
        if name in seen:
            problems.append(f"{docs_name}:{line}: a second block for {name} (the first is at line {seen[name]})")
            continue
        seen[name] = line
        if name not in want:
            problems.append(f"{docs_name}:{line}: block {name} is not a table of the schema "
                            f"(tables: {', '.join(want)})")
            continue
        if text != want[name]:
            diff = difflib.unified_diff(text.splitlines(True), want[name].splitlines(True),
                                        f"{docs_name} (line {line})", "rocelab-switch --config-schema", n=0)
            problems.append(f"{docs_name}:{line}: block {name} differs from the schema "
                            f"(run tools/config_docs.py --write):\n" + "".join(diff).rstrip("\n"))
    for name in want:
        if name not in seen:
            problems.append(f"{docs_name}: no block for table {name}: add <!-- schema:{name} begin --> and "
                            f"<!-- schema:{name} end --> where its field table belongs, then --write")
    for line in stray_markers(docs):
        problems.append(f"{docs_name}:{line}: a schema marker outside a well-formed begin/end pair")
    return problems


def write(schema, docs):
    want = {name: text for name, text, _, _ in blocks(schema)}
    out, pos = [], 0
    for name, _, start, end in blocks(docs):
        if name not in want:
            sys.exit(f"config_docs: block {name} in the docs is not a table of the schema")
        out.append(docs[pos:start])
        out.append(want[name])
        pos = end
    out.append(docs[pos:])
    return "".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when the docs differ from the schema")
    mode.add_argument("--write", action="store_true", help="rewrite the docs' blocks from the schema")
    ap.add_argument("--switch", default=os.path.join(os.environ.get("ROCELAB_BUILD", os.path.join(ROOT, "build")),
                                                     "app", "rocelab-switch"), help="the rocelab-switch binary")
    ap.add_argument("--docs", default=os.path.join(ROOT, "docs", "config.md"), help="the Markdown file")
    a = ap.parse_args(argv)
    schema = schema_text(a.switch)
    if not blocks(schema):
        sys.exit(f"config_docs: {a.switch} --config-schema printed no schema blocks")
    with open(a.docs, encoding="utf-8") as f:
        docs = f.read()
    name = os.path.relpath(a.docs, ROOT) if a.docs.startswith(ROOT) else a.docs
    if a.write:
        new = write(schema, docs)
        if new != docs:
            with open(a.docs, "w", encoding="utf-8") as f:
                f.write(new)
        problems = compare(schema, new, name)
    else:
        problems = compare(schema, docs, name)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"config_docs: {len(problems)} problem(s); {name}'s field tables must be the schema's "
              f"(rocelab-switch --config-schema)", file=sys.stderr)
        return 1
    print(f"config_docs: {name}: {len(blocks(schema))} tables match the schema")
    return 0


if __name__ == "__main__":
    sys.exit(main())
