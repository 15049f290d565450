#!/usr/bin/python3
"""readme_figures.py [--check | --write] [ROOT] - the speed figures README.md
quotes, taken from docs/benchmarks.md with their date.

The source is the newest dated section of docs/benchmarks.md (a "## "
heading with a YYYY-MM-DD date) holding a whole-switch table: a header cell
"rocelab / TOOL" (the ratio against TOOL) and a cell "rocelab" or "rocelab
after" (rocelab-switch's Mpps), one row per frame size. From it this script
writes the paragraph between the README's markers

    <!-- benchmarks:begin (tools/readme_figures.py --write; do not edit) -->
    ...
    <!-- benchmarks:end -->

  (no option)  print the paragraph
  --check      exit 1 when README.md's paragraph is not the one the newest
               figures give (meson test readme_figures), naming both
  --write      rewrite the paragraph in README.md

A new benchmark section whose table follows this shape moves the README's
figures on with it: the check fails until `--write` is run. Exit status: 0
done, 1 the README differs (--check), 2 no such table or markers (one line).
"""
import os
import re
import sys

PROG = "readme_figures.py"
BEGIN = "<!-- benchmarks:begin (tools/readme_figures.py --write; do not edit) -->"
END = "<!-- benchmarks:end -->"
DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


class Refused(Exception):
    pass


def sections(text):
    """[(heading, date, lines)] of the '## ' sections that carry a date."""
    out, cur = [], None
    for line in text.splitlines():
        if line.startswith("## "):
            m = DATE.search(line)
            cur = (line[3:].strip(), m.group(1), []) if m else None
            if cur:
                out.append(cur)
        elif cur is not None:
            cur[2].append(line)
    return out


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(lines):
    """Each markdown table of the lines as (header cells, [row cells])."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|[-|: ]+\|\s*$", lines[i + 1]):
            head, rows, i = cells(lines[i]), [], i + 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            out.append((head, rows))
        else:
            i += 1
    return out


def switch_table(head):
    """(Mpps column, ratio column, the tool of the ratio) or None."""
    mpps = next((i for i, h in enumerate(head) if h.lower() in ("rocelab", "rocelab after")), None)
    ratio = next((i for i, h in enumerate(head) if h.lower().startswith("rocelab / ")), None)
    if mpps is None or ratio is None:
        return None
    return mpps, ratio, head[ratio][len("rocelab / "):].strip()


def first_number(cell, what):
    m = NUMBER.search(cell.replace("*", ""))
    if not m:
        raise Refused(f"{what}: no number in '{cell}'")
    return m.group(0)


def newest(bench_text):
    """(date, heading, tool, [(frames, mpps, ratio)]) of the newest whole-switch table."""
    found = []
    for heading, date, lines in sections(bench_text):
        for head, rows in tables(lines):
            t = switch_table(head)
            if t:
                mpps, ratio, tool = t
                figs = [(r[0], first_number(r[mpps], f"{date} {r[0]}"), first_number(r[ratio], f"{date} {r[0]}"))
                        for r in rows if len(r) > max(mpps, ratio)]
                if figs:
                    found.append((date, heading, tool, figs))
    if not found:
        raise Refused("docs/benchmarks.md: no dated section with a table of 'rocelab' (or 'rocelab after') Mpps "
                      "and a 'rocelab / TOOL' ratio")
    return max(found, key=lambda f: f[0])  # the first of the newest date: max() keeps the first maximum


def paragraph(bench_text):
    date, heading, tool, figs = newest(bench_text)
    title = heading[:DATE.search(heading).start()].rstrip(" ,(")   # the heading up to its date
    parts = [f"{mpps} Mpps with {frames} frames ({ratio}x {tool})" for frames, mpps, ratio in figs]
    said = " and ".join([", ".join(parts[:-1]), parts[-1]]) if len(parts) > 1 else parts[0]
    text = (f"Latest whole-switch figures ({date}, docs/benchmarks.md, \"{title}\"; one forwarding "
            f"lcore, rocelab-switch with no config): {said}.")
    # Wrapped like the rest of the README (at most 80 columns).
    # A number stays with its unit ("1082 B" is not split over two lines).
    words, lines, line = re.sub(r"(\d) (B|Mpps)\b", "\\1\0\\2", text).split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > 80:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return "\n".join(lines).replace("\0", " ")


def readme_block(readme):
    a, b = readme.find(BEGIN), readme.find(END)
    if a < 0 or b < a:
        raise Refused(f"README.md: no '{BEGIN}' ... '{END}' markers")
    return a + len(BEGIN), b


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    opts = [a for a in argv[1:] if a.startswith("--")]
    if any(o not in ("--check", "--write") for o in opts) or len(opts) > 1 or len(args) > 1:
        print(f"usage: {PROG} [--check | --write] [ROOT]", file=sys.stderr)
        return 2
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        with open(os.path.join(root, "docs", "benchmarks.md"), encoding="utf-8") as f:
            want = paragraph(f.read())
        if not opts:
            print(want)
            return 0
        path = os.path.join(root, "README.md")
        with open(path, encoding="utf-8") as f:
            readme = f.read()
        a, b = readme_block(readme)
        have = readme[a:b].strip("\n")
        if opts[0] == "--check":
            if have != want:
                print(f"{PROG}: README.md quotes other figures than docs/benchmarks.md's newest; run "
                      f"tools/readme_figures.py --write\n--- README.md:\n{have}\n--- docs/benchmarks.md gives:\n{want}")
                return 1
            print(f"{PROG}: README.md quotes docs/benchmarks.md's newest figures:\n{want}")
            return 0
        with open(path, "w", encoding="utf-8") as f:
            f.write(readme[:a] + "\n" + want + "\n" + readme[b:])
        return 0
    except (Refused, OSError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
