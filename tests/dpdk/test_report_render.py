#!/usr/bin/python3
"""index.html of a rocelab-fabric run, read in a browser (issue 24 item 6).

A short virtual-time scenario (a 2:1 incast at 100 Gbps, 400 us) writes its
report folder; headless Chromium (Debian's `chromium`, installed by
tools/setup.sh) then renders index.html twice:

  1. a copy of the page with a probe script appended (the report itself has
     no script) and --dump-dom: for each <img> whether it loaded, its natural
     size and its box on the page, and the page's size;
  2. the page itself, --screenshot at the page's full height
     (--force-device-scale-factor=1, so one CSS pixel is one pixel).

The page renders with its plots when every plot of the report
(throughput.png, fct.png, queues.png, pfc.png) is an <img> that loaded
(naturalWidth >= 800, naturalHeight >= 400) and was laid out at a non-zero
size, and when in the screenshot each plot's box holds a drawing: at least
3 % of its pixels not white and at least 3 distinct saturated colours
(the lines). The whole screenshot must not be blank either. The visible
text has no raw float in scientific notation (the old "3.46142e+07 <
3.63e+07"), and the expectations' details carry units.

Controls that the check can fail (else it proves nothing): the same folder
with fct.png deleted (the image does not load) and with throughput.png
replaced by a white image of its size (it loads, but nothing is drawn).

No Chromium: every case fails, saying to run tools/setup.sh (a missing
browser is not a reason to skip).

Run: /usr/bin/python3 tests/dpdk/test_report_render.py -v
"""
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fabrictest import PLOTS, incast_2to1, run  # noqa: E402

WIDTH = 1200          # window width, CSS pixels (the page is at most 1100 wide)
MIN_INK = 0.03        # share of a plot's pixels that are not white
MIN_COLOURS = 3       # distinct saturated colours in a plot (its lines)

SCENARIO = """name: render-2to1
description: "2:1 incast at 100 Gbps, rendered by headless Chromium"
duration: 400us
""" + incast_2to1("64KiB") + """expect:
  - lossless_drops == 0
  - fct_max(h0->h2#0) < 1ms
  - goodput(h0->h2#0) > 10Gbps
  - busy(leaf0:Ethernet2) >= 90%
"""

# Appended to a copy of index.html: after the load event, the images' state
# and boxes and the page's size, as JSON in a <pre> that --dump-dom prints.
PROBE = """<script>
window.addEventListener("load", () => {
  const imgs = [...document.images].map(i => {
    const r = i.getBoundingClientRect();
    return {src: i.getAttribute("src"), complete: i.complete, nw: i.naturalWidth, nh: i.naturalHeight,
            x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height};
  });
  const d = document.documentElement;
  const out = {images: imgs, width: d.scrollWidth, height: d.scrollHeight, text: document.body.innerText};
  const pre = document.createElement("pre");
  pre.id = "rocelab-probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def chromium():
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return None


def run_chromium(args, profile, timeout=120):
    """Chromium headless with `args`; (stdout, stderr). Its whole process
    group (zygote, renderer, GPU process) is killed if it hangs."""
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
           "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
           "--force-device-scale-factor=1", f"--user-data-dir={profile}"] + args
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError(f"chromium (pid {p.pid}) did not finish in {timeout}s: {' '.join(cmd)}")
    if p.returncode != 0:
        raise AssertionError(f"chromium exit {p.returncode}: {' '.join(cmd)}\n{err[-2000:]}")
    return out, err


def render(folder, work):
    """(probe, screenshot path) of folder/index.html."""
    with open(os.path.join(folder, "index.html"), encoding="utf-8") as f:
        page = f.read()
    probe_page = os.path.join(folder, ".probe.html")
    with open(probe_page, "w", encoding="utf-8") as f:
        f.write(page.replace("</body>", PROBE + "</body>"))
    try:
        out, _ = run_chromium(["--virtual-time-budget=10000", f"--window-size={WIDTH},1000", "--dump-dom",
                               "file://" + probe_page], os.path.join(work, "profile-dom"))
    finally:
        os.unlink(probe_page)
    m = re.search(r'<pre id="rocelab-probe">(.*?)</pre>', out, re.S)
    if not m:
        raise AssertionError(f"the probe did not run (no #rocelab-probe in the DOM):\n{out[:2000]}")
    probe = json.loads(html.unescape(m.group(1)))
    shot = os.path.join(work, "shot.png")
    if os.path.exists(shot):
        os.unlink(shot)
    height = min(max(int(probe["height"]), 200), 16000)
    run_chromium(["--virtual-time-budget=10000", f"--window-size={WIDTH},{height}", f"--screenshot={shot}",
                  "file://" + os.path.join(folder, "index.html")], os.path.join(work, "profile-shot"))
    if not os.path.exists(shot):
        raise AssertionError("chromium wrote no screenshot")
    return probe, shot


def saturated(px):
    r, g, b = px[:3]
    return max(r, g, b) - min(r, g, b) >= 60


def problems(probe, shot, plots=PLOTS):
    """What is wrong with the rendered page: [] when it shows every plot."""
    from PIL import Image
    bad = []
    img = Image.open(shot).convert("RGB")
    W, H = img.size
    small = img.resize((max(W // 4, 1), max(H // 4, 1)))
    ink = sum(1 for p in small.getdata() if min(p) < 235) / (small.size[0] * small.size[1])
    if ink < 0.01:
        bad.append(f"the screenshot is blank ({ink:.2%} of its pixels not white)")
    by_src = {i["src"]: i for i in probe["images"]}
    for name in plots:
        i = by_src.get(name)
        if i is None:
            bad.append(f"{name}: no <img> on the page")
            continue
        if not i["complete"] or i["nw"] < 800 or i["nh"] < 400:
            bad.append(f"{name}: did not load as a plot (loaded {i['complete']}, natural size {i['nw']}x{i['nh']})")
            continue
        if i["w"] < 100 or i["h"] < 50:
            bad.append(f"{name}: laid out at {i['w']:.0f}x{i['h']:.0f} px")
            continue
        box = (int(i["x"]) + 2, int(i["y"]) + 2, int(i["x"] + i["w"]) - 2, int(i["y"] + i["h"]) - 2)
        if box[2] > W or box[3] > H:
            bad.append(f"{name}: its box {box} is outside the {W}x{H} screenshot")
            continue
        crop = img.crop(box)
        px = list(crop.getdata())
        share = sum(1 for p in px if min(p) < 235) / len(px)
        colours = {(p[0] // 32, p[1] // 32, p[2] // 32) for p in px if saturated(p)}
        if share < MIN_INK or len(colours) < MIN_COLOURS:
            bad.append(f"{name}: nothing drawn in its box {box} ({share:.2%} not white, {len(colours)} colours)")
    return bad


class ReportRenders(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="rocelab-render-")
        cls.missing = None
        if chromium() is None:
            cls.missing = ("no chromium on PATH: the report is checked in headless Chromium; "
                           "install it with `bash tools/setup.sh` (Debian package chromium)")
            return
        topo = os.path.join(cls.tmp.name, "render.yaml")
        with open(topo, "w") as f:
            f.write(SCENARIO)
        cls.out = os.path.join(cls.tmp.name, "out")
        rc, so, se = run(["run", topo, "--out", cls.out, "--quiet"])
        assert rc == 0, f"rocelab-fabric failed ({rc}):\n{so}\n{se}"
        cls.probe, cls.shot = render(cls.out, cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        if self.missing:
            self.fail(self.missing)

    def copy(self, name):
        d = os.path.join(self.tmp.name, name)
        shutil.copytree(self.out, d)
        return d

    def test_page_renders_with_its_plots(self):
        self.assertEqual(problems(self.probe, self.shot), [])
        self.assertEqual(sorted(i["src"] for i in self.probe["images"]), sorted(PLOTS))

    def test_text_has_units_not_raw_floats(self):
        text = self.probe["text"]
        self.assertIn("PASSED", text)
        self.assertIsNone(re.search(r"\d\.?\d*e[+-]\d+", text), "a raw float in scientific notation")
        # The expectations' details, with units: "...us < 1ms: yes", "...Gbps > 10Gbps: yes", "...% >= 90%".
        self.assertRegex(text, r"\d(\.\d+)?us < 1ms: yes")
        self.assertRegex(text, r"\d(\.\d+)?Gbps > 10Gbps: yes")
        self.assertRegex(text, r"\d(\.\d+)?% >= 90%: yes")
        self.assertIn("goodput over the flow's FCT", text)
        with open(os.path.join(self.out, "summary.json")) as f:
            summary = json.load(f)
        for fl in summary["flows"]:
            self.assertGreater(fl["goodput_fct"], fl["goodput"] * 0.99, fl["flow"])
            self.assertGreater(fl["flow_fct"], 0)
            self.assertEqual(fl["fct_samples"], fl["messages"])
        with open(os.path.join(self.out, "fct.csv")) as f:
            rows = f.read().splitlines()
        self.assertEqual(rows[0], "flow,fct_ns")
        self.assertEqual(len(rows) - 1, sum(fl["messages"] for fl in summary["flows"]))

    def test_control_a_plot_that_does_not_load_fails(self):
        d = self.copy("no-fct")
        os.unlink(os.path.join(d, "fct.png"))
        work = os.path.join(self.tmp.name, "no-fct-work")
        os.makedirs(work)
        probe, shot = render(d, work)
        bad = problems(probe, shot)
        self.assertEqual(len(bad), 1, bad)
        self.assertIn("fct.png: did not load as a plot", bad[0])

    def test_control_a_blank_plot_fails(self):
        from PIL import Image
        d = self.copy("blank")
        path = os.path.join(d, "throughput.png")
        Image.new("RGB", Image.open(path).size, "white").save(path)
        work = os.path.join(self.tmp.name, "blank-work")
        os.makedirs(work)
        probe, shot = render(d, work)
        bad = problems(probe, shot)
        self.assertEqual(len(bad), 1, bad)
        self.assertIn("throughput.png: nothing drawn", bad[0])


if __name__ == "__main__":
    import testmain  # exit 77 (meson SKIP) when a case skipped, naming it
    testmain.main()
