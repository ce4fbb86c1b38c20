"""One camera watched: its newest frames followed (`CameraFaces`), its tracks turned into visits (`Visits`), their
events handed to the sinks; and how it stands (`status`), for the status file and the page.

Recognition takes a frame at most `detect_fps` times a second (5 by default: a face is looked for on one frame in 3
of a 15 fps camera, as a video file's are), and the source keeps only the newest, so a camera that sends more than
recognition can take costs dropped frames (counted), never a backlog or memory. The latency of an arrival is
measured from the arrival of the first frame its track was seen on to the moment its event is handed to the sinks.
A camera's best face goes with an event only where the operator opted in (`crops`): an enrolled person's with
`--crops`, an unknown person's only where unknown faces may be kept at all (FACEREC_SUGGESTIONS=on, never in
privacy mode), as for every face of someone not enrolled.
"""

from __future__ import annotations

import threading
import time
from collections import deque

import numpy as np

from facerec.cameras.clock import utc_now
from facerec.cameras.source import CameraSource, redacted
from facerec.cameras.visits import Event, Visits
from facerec.formats.archive import encode_crop
from facerec.words.phrasing import one_line

DETECT_FPS = 5.0
RECENT_EVENTS = 20  # events the status keeps per camera, for the page
LATENCIES = 1_000  # arrival latencies kept per camera (for p50 / p99)
POSITIONS = 600  # frames whose stream position is remembered (a track is decided within seconds of its start)


class CameraWatcher:
    """`start()`, then it runs on its own thread until `stop()` (or, for a file played once, its end)."""

    def __init__(self, name: str, source: CameraSource, faces_for, sinks: list, leave_after: float,
                 detect_fps: float = DETECT_FPS, crops_known: bool = False, crops_unknown: bool = False) -> None:
        self.name, self.source, self.sinks = name, source, sinks
        self._faces_for = faces_for  # fps -> CameraFaces (a camera's rate is known once its stream opens)
        self._leave_after, self.interval = leave_after, 1.0 / max(detect_fps, 0.1)
        self._crops_known, self._crops_unknown = crops_known, crops_unknown
        self.processed = 0
        self.recent: deque[dict] = deque(maxlen=RECENT_EVENTS)
        self.latencies: deque[float] = deque(maxlen=LATENCIES)
        self.busy_seconds = 0.0
        self.problem: str | None = None  # why recognition stopped, if it did
        self.first_frame_at = self.last_frame_at = 0.0  # time.monotonic() of the first and last frames recognised
        self.visits: Visits | None = None
        self._started = time.monotonic()
        self._positions: dict[float, float] = {}  # camera clock -> stream position, of recent frames
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"watch {name}", daemon=True)

    def start(self) -> "CameraWatcher":
        self.source.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self.source.stop()
        self._thread.join(timeout=30)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def status(self) -> dict:
        source = self.source
        latencies = sorted(self.latencies)
        return {"camera": self.name, "url": redacted(source.url), "state": source.state,
                "problem": self.problem or source.problem,
                "fps": round(source.fps, 2), "frames_received": source.received, "frames_processed": self.processed,
                "frames_dropped": source.dropped,
                "reconnects": source.reconnects, "streaming_since": source.streaming_since,
                "busy_seconds": round(self.busy_seconds, 2),
                "recognising_seconds": round(self.last_frame_at - self.first_frame_at, 3),
                "present": sorted(v.name or "unknown" for v in (self.visits.open.values() if self.visits else [])),
                "latency_p50_s": _quantile(latencies, 0.5), "latency_p99_s": _quantile(latencies, 0.99),
                "recent_events": list(self.recent)}

    # ----- the recognition thread --------------------------------------------------------------------------------
    def _run(self) -> None:
        """Watch until stopped; a failure of recognition itself (the gallery's model changed under it, its database
        gone) stops this camera with one line in its status, never a traceback."""
        try:
            self._watch()
        except Exception as error:  # noqa: BLE001 - any failure becomes the camera's one line
            self.problem = one_line(f"recognition stopped: {error}")
            self.source.stop()

    def _watch(self) -> None:
        self._started = started = time.monotonic()
        faces = None
        next_at = 0.0
        while not self._stopped.is_set():
            taken = self.source.take(timeout=0.5)
            now = time.monotonic() - started
            if taken is not None:
                pixels, arrived, position = taken
                at = arrived - started  # the frame's time on the camera's clock: its tracks keep it
                self._positions[at] = position
                while len(self._positions) > POSITIONS:
                    self._positions.pop(next(iter(self._positions)))
                if faces is None:
                    faces = self._faces_for(self.source.fps or 15.0)
                    self.visits = Visits(self.name, faces.same_face(), self._leave_after)
                busy = time.monotonic()
                self.first_frame_at, self.last_frame_at = self.first_frame_at or busy, busy
                self._see(faces, pixels, at)
                self.busy_seconds += time.monotonic() - busy
                self.processed += 1
                next_at = max(next_at + self.interval, now)  # a fixed grid; behind it, the next frame at once
            if self.visits is not None:
                self._emit(self.visits.left(time.monotonic() - started))
            if self.source.ended:
                break
            wait = next_at - (time.monotonic() - started)
            if wait > 0:
                self._stopped.wait(wait)  # the frames meanwhile give way to the newest (dropped, counted)
        if self.visits is not None:  # stopped, or the file ended: everyone still there leaves now
            self.visits.leave_after = 0.0
            for visit in self.visits.open.values():
                visit.tracks.clear()
            self._emit(self.visits.left(float("inf")))

    def _see(self, faces, pixels: np.ndarray, at: float) -> None:
        decisions, ended = faces.see(pixels, at)
        visits = self.visits
        for decision in decisions:
            track, match = decision.track, decision.match
            wanted = self._crops_known if match.name else self._crops_unknown
            crop = encode_crop(track.best_crop) if wanted and track.best_crop is not None else None
            since_first = max(0.0, time.monotonic() - (self._started + track.times[0]))
            event = visits.decided(track.id, match, track.pooled, at, crop, utc_now(time.time() - since_first),
                                   self._positions.get(track.times[0]))  # its first frame's (None: forgotten)
            if event is not None:  # from the arrival of the track's first frame to the event
                self.latencies.append(since_first)
                self._emit([event])
        visits.seen([t.id for t in faces.follower.active.values()], at)
        for track in ended:
            visits.ended(track.id)

    def _emit(self, events: list[Event]) -> None:
        for event in events:
            self.recent.appendleft(event.to_dict(with_face=False))
            for sink in self.sinks:
                sink.put(event)


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    return round(values[min(len(values) - 1, int(q * len(values)))], 3)
