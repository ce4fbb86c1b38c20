"""One identify, profiled: what it does per request, and how long one client waits over REST and in the page.

    nice -n 5 python benchmarks/identify_profile.py --data ../shared/data --out benchmarks/results/identify_profile.json

A gallery of `--people` LFW people (each enrolled from their first one-face photo), queried with their other
one-face photos (`rest_throughput.one_face_queries`):

- **work per request**, in-process: `Gallery.identify` as the REST route calls it (defaults), and as the Identify
  tab calls it without the password (the rate slider's 1%), counting the model checks (queries for faces of
  another model), journal syncs (`JournalFollowingIndex.sync`), threshold rules (the policy's decisions) and
  database reads of the journal while the index lock is held;
- **REST**: `python app.py` on that gallery, one client with a read key posting photos one after another: p50 and
  p99 of `--requests` requests after a warm-up;
- **the page**: Chromium on the Identify tab, a photo uploaded once, then `--clicks` clicks of Identify, each timed
  from the click until the status line shows the new answer (the median and the largest).

Counting wraps the methods for the duration of this script only; nothing in facerec changes.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from app_server import running_app  # noqa: E402 - starts app.py the way the tests do
from rest_throughput import one_face_queries  # noqa: E402

from facerec.access.api_keys import ApiKeys  # noqa: E402
from facerec.gallery import Gallery  # noqa: E402
from facerec.gallery.composition import parts_of  # noqa: E402
from facerec.openset.threshold_policy import ThresholdPolicy  # noqa: E402
from facerec.provenance import write_result  # noqa: E402
from facerec.settings import Settings  # noqa: E402
from facerec.storage.faces import FacesTable  # noqa: E402
from facerec.storage.journal import JournalTable  # noqa: E402
from facerec.vectors.following import JournalFollowingIndex  # noqa: E402

WARM_UP = 10
QUIET_MS = 1500  # the Identify tab unchanged this long: the answer is drawn
COUNTED = {"model_checks": (FacesTable, "other_model_ids"), "journal_syncs": (JournalFollowingIndex, "sync"),
           "threshold_rules": (ThresholdPolicy, "_decide"), "journal_reads": (JournalTable, "since")}


class Counter:
    """Counts calls of the COUNTED methods (and journal reads made while an index lock is held)."""

    def __init__(self) -> None:
        self.counts: collections.Counter = collections.Counter()
        self.index = None

    def install(self) -> None:
        for key, (owner, name) in COUNTED.items():
            setattr(owner, name, self._counting(key, getattr(owner, name)))

    def _counting(self, key: str, method):
        @functools.wraps(method)
        def counted(*args, **kwargs):
            self.counts[key] += 1
            if key == "journal_reads" and self.index is not None and self.index.lock._is_owned():
                self.counts["journal_reads_under_index_lock"] += 1
            return method(*args, **kwargs)
        return counted

    def per_call(self, call, times: int) -> dict:
        self.counts.clear()
        for _ in range(times):
            call()
        keys = list(COUNTED) + ["journal_reads_under_index_lock"]
        return {key: round(self.counts[key] / times, 2) for key in keys}


def percentiles(seconds: list[float]) -> dict:
    milliseconds = 1000 * np.array(seconds)
    return {"requests": len(milliseconds), "p50_ms": round(float(np.percentile(milliseconds, 50)), 1),
            "p99_ms": round(float(np.percentile(milliseconds, 99)), 1),
            "max_ms": round(float(milliseconds.max()), 1)}


def rest_latency(url: str, key: str, queries: list, requests: int) -> dict:
    with httpx.Client(base_url=f"{url}api/v1", timeout=120, trust_env=False, headers={"X-API-Key": key}) as http:
        def post(data: bytes) -> None:
            response = http.post("/identify", data={"top_k": "3"}, files={"photo": ("q.jpg", data, "image/jpeg")})
            response.raise_for_status()

        for number in range(WARM_UP):
            post(queries[number % len(queries)][1])
        seconds = []
        for number in range(requests):
            start = time.perf_counter()
            post(queries[number % len(queries)][1])
            seconds.append(time.perf_counter() - start)
    return percentiles(seconds)


def page_latency(url: str, photo: Path, clicks: int) -> dict:
    """Click-to-result in Chromium, on the page's own clock: from the click until the last change the answer made
    to the Identify tab (picture, table, status), read once the tab has been still for QUIET_MS."""
    from browser_helpers import CHROMIUM, CHROMIUM_ARGS, IMAGE_INPUT
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(url, timeout=120_000)
        page.get_by_role("tab", name="Identify", exact=True).click()
        panel = page.get_by_role("tabpanel")
        panel.locator(IMAGE_INPUT).set_input_files(str(photo))
        button = panel.get_by_role("button", name="Identify", exact=True)
        button.click()  # the first answer, before the clock is installed
        page.wait_for_function("() => /face\\(s\\):/.test(document.querySelector('#identify-status').innerText)",
                               timeout=120_000)
        panel.evaluate("""(panel) => {
            window.__clock = {click: 0, last: 0};
            [...panel.querySelectorAll('button')].find(b => b.innerText.trim() === 'Identify').addEventListener('click', () => {
                window.__clock.click = window.__clock.last = performance.now(); }, true);
            new MutationObserver(() => { window.__clock.last = performance.now(); }).observe(
                panel, {subtree: true, childList: true, attributes: true, characterData: true});
        }""")
        seconds = []
        for number in range(WARM_UP // 2 + clicks):
            button.click()
            page.wait_for_function(f"() => window.__clock.click > 0 && performance.now() - window.__clock.last > "
                                   f"{QUIET_MS}", timeout=60_000)
            elapsed = page.evaluate("() => (window.__clock.last - window.__clock.click) / 1000")
            if number >= WARM_UP // 2:
                seconds.append(elapsed)
        browser.close()
    milliseconds = 1000 * np.array(seconds)
    return {"clicks": len(seconds), "median_ms": round(float(np.median(milliseconds)), 1),
            "max_ms": round(float(milliseconds.max()), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--clicks", type=int, default=15)
    parser.add_argument("--out")
    args = parser.parse_args()
    results = {"command": "python " + " ".join(sys.argv),
               "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                           "load_average_at_start": [round(v, 2) for v in os.getloadavg()]},
               "people": args.people}
    counter = Counter()
    counter.install()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        with Gallery(Settings.from_env(home=home)) as gallery:
            enrollments, queries = one_face_queries(gallery, Path(args.data) / "lfw", args.people, 100)
            for name, photo in enrollments:
                gallery.enroll(photo, name, allow_lookalike=True, allow_low_quality=True)
            _, key = ApiKeys(parts_of(gallery).store).create("read", "identify profile benchmark")
            parts_of(gallery).index.save(gallery.services().settings.home, gallery.services().maintenance.model_id, parts_of(gallery).store)
            counter.index = parts_of(gallery).index
            photo = gallery.services().photos.read(queries[0][1])
            results["faces_enrolled"] = len(parts_of(gallery).index)
            results["per_request"] = {
                "rest_defaults": counter.per_call(lambda: gallery.identify(photo, top_k=3), 20),
                "page_without_password": counter.per_call(lambda: page_identify(gallery, photo), 20)}
        query_file = Path(folder) / "query.jpg"
        query_file.write_bytes(queries[0][1])
        with running_app(home) as app:
            results["rest_one_client"] = rest_latency(app.url, key, queries, args.requests)
            results["page_click_to_result"] = page_latency(app.url, query_file, args.clicks)
    results["machine"]["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(results, indent=1))
    if args.out:
        write_result(args.out, results, Settings.from_env().model_path, threads=0)


def page_identify(gallery: Gallery, photo) -> None:
    """What the Identify tab asks of the gallery for one click without the password, at the slider's 1%."""
    try:
        gallery.identify(photo, top_k=3, fpir=0.01, not_below_default=True)
    except TypeError:  # the code before identify took `not_below_default`: the tab asked for the rule itself
        if gallery.services().thresholds.in_force(0.01, None).threshold < gallery.services().thresholds.in_force().threshold:
            gallery.identify(photo, top_k=3)
        else:
            gallery.identify(photo, top_k=3, fpir=0.01)


if __name__ == "__main__":
    main()
