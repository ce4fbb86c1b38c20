"""The threshold in force for one gallery now: the threshold policy (`facerec.openset.threshold_policy`) applied
to the gallery's size and its own stranger tail (`facerec.gallery.population`).

Every decision that names a person (identify, the look-alike check of an enrollment, verify, Health) asks here,
so all of them use one rule."""

from __future__ import annotations

import threading

from facerec.gallery.census import GalleryCensus
from facerec.gallery.population import PopulationCache
from facerec.openset.threshold_policy import ThresholdInForce, ThresholdPolicy
from facerec.storage import Store
from facerec.vectors.base import VectorIndex


CORROBORATION_SHARE = 10  # a name through a learned face: own photos at a tenth of the accepted rate


class GalleryThresholds:
    def __init__(self, policy: ThresholdPolicy, store: Store, index: VectorIndex) -> None:
        self._policy, self._store, self._index = policy, store, index
        # the gallery's own stranger tail, measured as the gallery grows, on the scores the policy decides with
        self._population = PopulationCache(policy.calibration.ceiling)
        self._census = GalleryCensus(store)  # people and photos per person, read again when the journal moves
        self._typical: tuple[int, tuple[float | None, float | None]] | None = None  # (journal position, stats)
        self._lock = threading.Lock()

    def in_force(self, fpir: float | None = None, threshold: float | None = None,
                 with_people: bool = False) -> ThresholdInForce:
        """The threshold identify and the look-alike check use now, with its expected stranger-match rate;
        `fpir` / `threshold` override the settings for one decision. The people count is only reported, so it
        is read only when asked for."""
        self._index.sync(self._store)
        return self.synced(fpir, threshold, with_people)

    def synced(self, fpir: float | None = None, threshold: float | None = None,
               with_people: bool = False) -> ThresholdInForce:
        """`in_force` for a caller that has just synced the index (identify syncs once per request)."""
        faces, seq = len(self._index), self._index.seq
        census = self._census.at(seq, faces)
        return self._policy.for_gallery(faces, census.people if with_people else None, fpir=fpir, threshold=threshold,
                                       population=self._population.tail(self._store, faces, seq),
                                       photo_counts=census.photo_counts)

    def is_default(self, fpir: float | None, threshold: float | None) -> bool:
        """Whether a caller's rate and pin ask for exactly the rule in force (the page always sends its slider's
        rate, which is the default until someone moves it)."""
        return threshold is None and (fpir is None or (fpir == self._policy.fpir
                                                       and self._policy.pinned_threshold is None))

    def for_verification(self, fpir: float | None = None, threshold: float | None = None) -> ThresholdInForce:
        """The threshold verify uses: the same rule for one comparison (its FPIR is the per-comparison FAR), with
        the gallery's own stranger tail where it has one (the photos compared are likely of its population)."""
        self._index.sync(self._store)
        return self._policy.for_verification(fpir=fpir, threshold=threshold,
                                            population=self._population.tail(self._store, len(self._index),
                                                                            self._index.seq))

    def for_claims(self) -> ThresholdInForce:
        """The level a claim "this face is X" is checked at, against X's own photos: verify's threshold at the
        accepted rate, one comparison (a pin on identify's threshold does not move it). Learning a corrected face
        needs it (`facerec.gallery.templates`), and so does a name reached through a learned face
        looser than the open-set threshold in force, stated in docs/app.md."""
        return self.for_verification(fpir=self._policy.fpir)

    def for_corroboration(self) -> ThresholdInForce:
        """The level at which a person's own photos must match a face named through one of their learned faces
        (`facerec.gallery.search`): one comparison at a tenth of the accepted rate (0.1% by default). Stricter
        than a claim, because nobody vouched for this face; looser than the open-set threshold in force of any
        gallery over ten faces. benchmarks/claims.py measures what it keeps out (chains of confirmed morphs) and
        what it costs (genuine faces no longer named)."""
        return self.for_verification(fpir=self._policy.fpir / CORROBORATION_SHARE)

    def typical_cosine(self, threshold: float) -> float:
        """The cosine at which two faces with this gallery's median cohort statistics reach the score
        `threshold`: what the threshold means for the raw cosines and distances Health reads (its spec's
        metrics are on raw distances). On a card calibrated on cosines, the threshold itself."""
        if not self._policy.calibration.normalised:
            return threshold
        seq = self._index.seq
        with self._lock:
            if self._typical is None or self._typical[0] != seq:  # read again only when the journal has moved
                self._typical = (seq, self._store.faces.median_statistics())
            mean, sd = self._typical[1]
        return threshold if mean is None else float(mean + threshold * sd)

    def forget_population(self) -> None:
        """The embeddings changed wholesale (another model, a reindex): the measured tail no longer holds."""
        self._population.invalidate()

    def growth(self, fpir: float | None = None) -> list[ThresholdInForce]:
        """The threshold in force (and the expected true-match rate) as a gallery grows: 1 ... 1,000,000 faces."""
        return self._policy.growth(fpir=fpir)
