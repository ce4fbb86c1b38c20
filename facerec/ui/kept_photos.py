"""The photos pages keep to be asked about again: decoded, in memory, for every page together at most
`DEFAULT_LIMIT_BYTES` (the oldest kept is forgotten first) and each for a while (10 minutes in the app).

Why one store for all pages: a page's session used to hold its decoded photo itself, for 10 minutes, and any
anonymous caller can open sessions (Add photo's upload event decodes before any password): 40 sessions of a
244 KB JPEG of 16 MP held 1.9 GB. A page's session now holds a `KeptPhoto`, a handle that does not keep the
photo alive; the store does, within its bound, so a flood of sessions pushes older photos out instead of growing
the server. A page whose photo was pushed out is asked to upload it again (`facerec.ui.uploads.GONE`).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass

from facerec.faces.pipeline import Photo

DEFAULT_LIMIT_BYTES = 256 << 20  # 256 MiB: five photos at the working size of 16 MP, far more of ordinary ones


@dataclass(frozen=True)
class KeptPhoto:
    """What a page's session holds of a photo it answered about: the upload it came from (whose file is
    deleted), and a weak reference to the decoded photo, alive while `KeptPhotos` keeps it."""

    upload: str
    reference: weakref.ref

    @property
    def photo(self) -> Photo | None:
        """The decoded photo, or None once the store has forgotten it."""
        return self.reference()


class KeptPhotos:
    """Decoded photos kept for pages, at most `limit_bytes` of pixels in all, each at most `max_age_s` after it
    was last answered about."""

    def __init__(self, max_age_s: float, limit_bytes: int = DEFAULT_LIMIT_BYTES) -> None:
        self.limit_bytes, self.max_age_s = limit_bytes, max_age_s
        self._photos: OrderedDict[int, tuple[Photo, float]] = OrderedDict()  # id(photo) -> (photo, kept at)
        self._bytes = 0
        self._lock = threading.Lock()

    def keep(self, upload: str, photo: Photo) -> KeptPhoto:
        """Keep `photo` (newest; again if it was kept already) and return the page's handle on it; older photos
        are forgotten to stay within the bound."""
        now = time.monotonic()
        with self._lock:
            self._forget_expired(now)
            if id(photo) in self._photos:
                self._photos.move_to_end(id(photo))
            else:
                self._bytes += photo.pixels.nbytes
            self._photos[id(photo)] = (photo, now)
            while self._bytes > self.limit_bytes:  # a photo larger than the whole bound is not kept either
                self._drop(next(iter(self._photos)))
        return KeptPhoto(upload, weakref.ref(photo))

    def forget(self, kept: KeptPhoto | None) -> None:
        """Forget the photo behind `kept` (a page's session ended, or its photo was replaced), and every photo
        past its age."""
        with self._lock:
            photo = kept.photo if isinstance(kept, KeptPhoto) else None
            if photo is not None and id(photo) in self._photos:
                self._drop(id(photo))
            self._forget_expired(time.monotonic())

    def _forget_expired(self, now: float) -> None:
        for key, (_photo, kept_at) in list(self._photos.items()):
            if now - kept_at > self.max_age_s:
                self._drop(key)

    def _drop(self, key: int) -> None:
        photo, _kept_at = self._photos.pop(key)
        self._bytes -= photo.pixels.nbytes
