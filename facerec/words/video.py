"""A video's answer in words: what was followed, what was skipped, and what a track's threshold means.

Numbers come from `facerec.gallery.video.VideoAnswer`; every interface (CLI, page, REST) takes its sentences here.
"""

from __future__ import annotations

from facerec.words.phrasing import plural, score_text


def clock(seconds: float) -> str:
    """A time in a video: '0:07.4', '12:03.0'."""
    minutes, rest = divmod(max(0.0, float(seconds)), 60.0)
    return f"{int(minutes)}:{rest:04.1f}"


def span(first_time: float, last_time: float) -> str:
    """When a track was on screen: '0:00.0-0:06.1'."""
    return f"{clock(first_time)}-{clock(last_time)}"


def ordinal(number: int) -> str:
    if number == 1:
        return "every"
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"every {number}{suffix}"


def video_summary(answer: dict) -> str:
    """One paragraph for a `VideoAnswer.to_dict()`: tracks, people named, what was looked at, how fast."""
    video, counts, tracks = answer["video"], answer["counts"], answer["tracks"]
    named = sorted({t["name"] for t in tracks if t["known"]})
    speed = counts["frames"] / answer["seconds_taken"] if answer["seconds_taken"] > 0 else 0.0
    text = (f"{plural(len(tracks), 'face')} followed in {video['seconds']:.1f} s of video "
            f"({plural(counts['frames'], 'frame')}, faces looked for on {ordinal(answer['detected_every'])} frame: "
            f"{counts['detected_frames']:,}; {plural(counts['embedded'], 'view')} embedded), "
            f"{plural(len(named), 'person', 'people')} named{': ' + ', '.join(named) if named else ''}. "
            f"Followed at {speed:.0f} frames a second.")
    return text


def pooled_sentence(answer: dict) -> str:
    """What a track's threshold is: the photo rule's threshold plus the shift for pooled evidence."""
    shift = answer["pooled_shift"]
    text = (f"Each track is decided once, on its views pooled, at score {score_text(answer['score_threshold'])}"
            + (f" (a photo's threshold + {score_text(shift)} for pooled evidence, so a stranger's track is named no "
               "more often than a stranger's photo)" if shift > 0 else " (a photo's threshold)") + ".")
    return text + (f" Warning: {answer['warning']}." if answer.get("warning") else "")


LIVE_NOTE = ("Point the camera at faces: each face is followed from frame to frame and named once its views are "
             "enough (the name can change while more views arrive). Browsers let a page use the camera only on "
             "localhost or over HTTPS: opened from another machine by plain http://, this tab shows no camera. Frames "
             "that arrive while the server is still busy with the previous one are dropped, never queued, so what "
             "you see stays current.")


# What the Live tab says when the browser gives it no camera (#64 row 6: "Click to Access Webcam" did nothing).
CAMERA_PROBLEMS = {
    "insecure": ("This browser gives the page no camera: browsers allow one only on localhost or over HTTPS. Open the "
                 "app as http://localhost on this machine, or put it behind HTTPS."),
    "none": "No camera was found on this device: connect one and reopen this tab, or identify a video file instead.",
    "denied": ("The browser was told not to let this page use the camera: allow the camera in its site settings (the "
               "icon left of the address), then reload the page."),
    "unlisted": "The browser would not list its cameras; if Click to Access Webcam does nothing, reload the page.",
}


def live_status(followed: int, dropped: int, names: list[str]) -> str:
    """Who is on the last frame (each face's name or "unknown", as drawn on it: in words too, for a screen reader
    and for anyone who cannot see the frame) and how the live camera is keeping up: frames followed and dropped."""
    who = f": {', '.join(names)}" if names else ""
    return (f"{plural(len(names), 'face')} on this frame{who}; {plural(followed, 'frame')} followed, {dropped:,} "
            "dropped while the server was busy.")


def live_refused(reason: str) -> str:
    """A camera frame that was not followed (not a photo format, too large): the reason, and that the camera goes on."""
    return f"A frame was not followed: {reason}. The camera goes on with the next frame."


# Codecs (FFmpeg's names) that no browser plays in a <video>; AVI, whatever it holds, neither.
UNPLAYABLE_CODECS = {"mpeg4": "MPEG-4 Part 2", "msmpeg4v3": "MPEG-4 Part 2 (DivX 3)", "mjpeg": "Motion JPEG"}


def preview_note(container: str, codec: str) -> str:
    """What to tell a user whose uploaded video the browser cannot preview (its player then shows an error that is
    not ours), or '' when browsers play it."""
    if container == "avi":
        what = "an AVI file"
    elif codec in UNPLAYABLE_CODECS:
        what = f"{UNPLAYABLE_CODECS[codec]} video"
    else:
        return ""
    return (f"Browsers cannot play {what}, so the preview above shows an error; Identify video reads it all the "
            "same, and its answer comes back as a video that plays.")
