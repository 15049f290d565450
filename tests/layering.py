#!/usr/bin/python3
"""Layering check: fails when a layer includes one above it, or when DPDK
headers (rte_*.h) appear outside the layers allowed to see them.

The layers (docs/architecture.md, "Layers"), lowest first. A directory may
include itself and the layers listed for it, nothing else:

  lib/core       -
  lib/proto      core
  lib/qos        core (pure state machines; their config structs live here)
  lib/fwd        core, proto
  lib/roce       core, proto, qos
  lib/config     core, proto, qos, fwd, roce (YAML -> the structs above)
  lib/fabric     core, proto, qos, fwd, roce, config (topology files,
                 expectations, real-time scaling: read by the fabric only)
  lib/sim        core (virtual clock, event queue, modelled links; pure)
  lib/dpdk       core, proto, qos, fwd, roce, config     (+ rte_*.h)
  pipelines      lib/* but sim and fabric, switch, gen   (+ rte_*.h)
                 (pipelines/switch, pipelines/gen and the shared headers)
  pipelines/vt   lib/*, switch, gen, vt: the only pipelines that see lib/sim
                 and lib/fabric                          (+ rte_*.h)
  app            lib/*, pipelines, app                   (+ rte_*.h)

A file belongs to the longest of these paths that holds it.

rte_*.h is allowed only in lib/dpdk's .cpp files (never in a lib/ header:
what a header includes leaks into everything above it), pipelines/ and app/
(and in tests/dpdk, bench/ and tests/fuzz, which drive real ports); never in
tests/unit, whose tests run without DPDK.

No lib/ file may name ROCELAB_STAGE_CYCLES or include stage_clock.hpp: the
stage-cycles binaries (rocelab-switch-stages, rocelab-gen-stages) compile
pipelines/ and app/ with that define over the normal build's lib/ objects,
which is one definition of everything only while lib/ does not depend on it.
Run:
  /usr/bin/python3 tests/layering.py [ROOT]
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LIB = ["core", "proto", "qos", "fwd", "roce", "config", "fabric", "sim", "dpdk"]
ALLOWED = {
    "lib/core": {"core"},
    "lib/proto": {"core", "proto"},
    "lib/qos": {"core", "qos"},
    "lib/fwd": {"core", "proto", "fwd"},
    "lib/roce": {"core", "proto", "qos", "roce"},
    "lib/config": {"core", "proto", "qos", "fwd", "roce", "config"},
    "lib/fabric": {"core", "proto", "qos", "fwd", "roce", "config", "fabric"},
    "lib/sim": {"core", "sim"},
    "lib/dpdk": {"core", "proto", "qos", "fwd", "roce", "config", "dpdk"},
    "pipelines": (set(LIB) - {"sim", "fabric"}) | {"switch", "gen"},
    "pipelines/vt": set(LIB) | {"switch", "gen", "vt"},
    "app": set(LIB) | {"switch", "gen", "vt", "app"},
    "tests/unit": set(LIB),  # pure code only: no DPDK header, no pipeline
}
RTE_OK = ("pipelines", "app")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of(rel):
    """The longest layer path holding rel (pipelines/vt before pipelines)."""
    best = None
    for layer in ALLOWED:
        if (rel == layer or rel.startswith(layer + "/")) and (best is None or len(layer) > len(best)):
            best = layer
    return best


def main():
    errors = []
    checked = 0
    for top in ("lib", "pipelines", "app", "tests/unit"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for fn in sorted(files):
                if not fn.endswith((".hpp", ".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, ROOT)
                layer = layer_of(os.path.dirname(rel))
                if layer is None:
                    continue
                checked += 1
                with open(path, encoding="utf-8") as f:
                    for n, line in enumerate(f, 1):
                        if layer.startswith("lib/") and ("ROCELAB_STAGE_CYCLES" in line or "stage_clock.hpp" in line):
                            errors.append(f"{rel}:{n}: lib/ depends on the stage-cycles define; the stage binaries "
                                          "link the normal lib/ objects (pipelines/meson.build)")
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        kind, inc = m.groups()
                        if os.path.basename(inc).startswith("rte_"):
                            ok = layer.startswith(RTE_OK) or (layer == "lib/dpdk" and fn.endswith(".cpp"))
                            if not ok:
                                errors.append(f"{rel}:{n}: includes DPDK header {inc}; only lib/dpdk's .cpp "
                                              "files, pipelines/ and app/ may (lib/ headers forward-declare "
                                              "DPDK types)")
                            continue
                        if kind != '"' or "/" not in inc:
                            continue  # system or same-directory header
                        first = inc.split("/")[0]
                        if first in LIB or first in ("switch", "gen", "vt"):
                            if first not in ALLOWED[layer]:
                                errors.append(f"{rel}:{n}: {layer} includes {inc}: {first} is not below "
                                              f"{layer} (allowed: {', '.join(sorted(ALLOWED[layer]))})")
    for e in errors:
        print(e)
    print(f"layering: {checked} files checked, {len(errors)} violations")
    return 1 if errors or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
