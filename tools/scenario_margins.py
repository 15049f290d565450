#!/usr/bin/python3
"""How far each library scenario's expectations sit from their thresholds,
over several seeds (issue 19 item 9).

For every scenario in conf/scenarios/ (the cluster excepted: it is a
benchmark), and every seed in --seeds, a copy of the file is run with that
seed everywhere a random choice is made: the generator's `seed`, each
switch's `ROCELAB.seed` (WRED's draws, the ECMP hash salt) and each lossy
cable's `loss_seed`. Per expectation it prints how many seeds passed, the
worst figure, and the margin of the worst seed:

  a > b, a >= b     (a - b) / |b|
  a < b, a <= b     (b - a) / |b|
  a within X% of b  X - |a - b| / |b|          (the tolerance left)
  a / b within X%   X - |a/b - 1|
  a == b            exact: passed or not

A negative margin is a seed that fails. Output: a markdown table (the one in
docs/scenarios.md, "Margins over seeds") and, with --json, every figure.

  tools/scenario_margins.py [--seeds 1-8] [--build build] [--only NAME,..] [--json FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Yaml11Strings(yaml.SafeLoader):
    """YAML as rocelab reads it: `off`, `on`, `yes`, `no` stay words (dcqcn: off), only true/false are booleans."""


Yaml11Strings.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
Yaml11Strings.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|false)$"), list("tf"))


def seeds_of(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += list(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def reseeded(doc, seed):
    doc = json.loads(json.dumps(doc))  # deep copy
    doc.setdefault("traffic", {})["seed"] = seed
    for sw in doc.get("switches", []):
        cfg = sw.get("config")
        if isinstance(cfg, dict):
            cfg.setdefault("ROCELAB", {})["seed"] = seed
    for ln in doc.get("links", []):
        if "loss" in ln:
            ln["loss_seed"] = seed
    return doc


def margin(text, lhs, rhs, passed):
    m = re.search(r"within\s+([\d.]+)%\s+of", text)
    if m:
        return float(m.group(1)) / 100 - abs(lhs - rhs) / abs(rhs) if rhs else None
    m = re.search(r"within\s+([\d.]+)%\s*$", text)
    if m:
        return float(m.group(1)) / 100 - abs(lhs - 1)
    m = re.search(r"\s(==|!=|>=|<=|>|<)\s", text)
    if not m or m.group(1) in ("==", "!="):
        return None
    if rhs == 0:
        return float("inf") if passed else float("-inf")
    return (lhs - rhs) / abs(rhs) if m.group(1) in (">", ">=") else (rhs - lhs) / abs(rhs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1-8", help="seeds, e.g. 1-8 or 3,7,11 (default 1-8)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--json", default="", help="write every figure here")
    a = ap.parse_args()
    fabric = os.path.join(a.build, "app", "rocelab-fabric")
    names = sorted(f[:-5] for f in os.listdir(os.path.join(ROOT, "conf", "scenarios"))
                   if f.endswith(".yaml") and not f.startswith("cluster-"))
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    seeds = seeds_of(a.seeds)
    rows, figures, failed = [], {}, 0
    with tempfile.TemporaryDirectory(prefix="rocelab-margins-") as tmp:
        for name in names:
            src = os.path.join(ROOT, "conf", "scenarios", name + ".yaml")
            with open(src) as f:
                doc = yaml.load(f, Loader=Yaml11Strings)
            per = {}
            t0 = time.monotonic()
            for s in seeds:
                path = os.path.join(tmp, f"{name}-{s}.yaml")
                with open(path, "w") as f:
                    yaml.safe_dump(reseeded(doc, s), f, sort_keys=False)
                out = os.path.join(tmp, f"{name}-{s}")
                r = subprocess.run([fabric, "run", path, "--out", out, "--no-plots", "--quiet"],
                                   capture_output=True, text=True, cwd=os.path.dirname(src))
                if r.returncode not in (0, 3):
                    print(f"{name} seed {s}: rocelab-fabric exited {r.returncode}\n{r.stderr[-2000:]}", file=sys.stderr)
                    sys.exit(1)
                with open(os.path.join(out, "summary.json")) as f:
                    summ = json.load(f)
                for e in summ["expectations"]:
                    per.setdefault(e["expect"], []).append((s, e["lhs"], e["rhs"], e["passed"]))
            print(f"{name}: {len(seeds)} seeds in {time.monotonic() - t0:.1f}s", file=sys.stderr)
            figures[name] = per
            for text, runs in per.items():
                ms = [(margin(text, lhs, rhs, ok), s, lhs, ok) for s, lhs, rhs, ok in runs]
                npass = sum(1 for *_, ok in ms if ok)
                failed += len(runs) - npass
                num = [x for x in ms if x[0] is not None]
                if num:
                    worst = min(num, key=lambda x: x[0])
                    w = "(threshold 0)" if abs(worst[0]) == float("inf") else f"{worst[0] * 100:+.1f} %"
                    rows.append(f"| {name} | `{text}` | {npass}/{len(runs)} | {worst[2]:.4g} (seed {worst[1]}) | {w} |")
                else:
                    lhs = sorted({f"{x[2]:.4g}" for x in ms})
                    rows.append(f"| {name} | `{text}` | {npass}/{len(runs)} | {', '.join(lhs[:3])} | exact |")
    print("| scenario | expectation | seeds passed | worst figure | margin of the worst seed |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(figures, f, indent=1)
    print(f"\n{failed} failing (scenario, expectation, seed) runs", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
