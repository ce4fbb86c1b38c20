"""The Gallery: the one object the UI and the CLI call to enroll, identify, verify and manage people.

A thin facade over three parts: the store (`facerec.storage`: the database, the source of truth, every query made
of it), the vector index (`facerec.vectors`: searches the embeddings, follows the database), the photo pipeline.

What the gallery does with them lives beside this file, in narrow services that are each given only the parts
they use (never the Gallery): `thresholds` (the threshold in force, with the gallery's own stranger tail of
`population`), `search` (identify, verify), `video` (faces followed across a video's frames, one answer per track),
`strangers` and `suggestions` (unknown faces, opt-in, grouped into suggested people), `enrollment` (enroll, add a
photo, bulk adds, with the enrollment quality check of `facerec.faces.quality`), `sightings` (the memory of recent
identifications), `people` (list, rename, delete), `transfer` (export/import), `reindex` (another model) and
`health/` (Health's numbers). The Gallery builds them once and keeps the public verbs, each one line that names
the service method where its contract is written. The interfaces need nothing behind it: they call these verbs and
the one service it hands out, `keys` (the REST API's keys, kept in the gallery's database); never the store, the
index or the pipeline (`tests/test_architecture.py` checks it).

The vector index is brought up to date from the database's journal before every search, so several threads and
processes can share one gallery. Every check that decides whether a write may happen (name taken, same photo
already enrolled, look-alike) is repeated inside the write transaction, which the database serialises across
threads and processes, so two simultaneous enrollments cannot both pass it. A write that is refused changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from facerec.access.api_keys import ApiKeys
from facerec.errors import InvalidArgument, UnknownSighting
from facerec.gallery.archive import ImportLimits
from facerec.faces.detect import DetectedFace
from facerec.faces.image import ImageInput
from facerec.faces.pipeline import FacePipeline, Photo
from facerec.gallery.results import Candidate, EnrollResult, FaceMatch, IdentityInfo, VerifyResult
from facerec.faces.quality import EnrollmentQuality, QualityCheck
from facerec.settings import Settings
from facerec.storage import Store, database_file
from facerec.openset.threshold_policy import ThresholdInForce
from facerec.vectors import open_index
from facerec.vectors.saved_files import refuse_to_replace_saved_index
from facerec.gallery import people, reindex, transfer
from facerec.gallery.enrollment import Enrollment
from facerec.gallery.face_choice import decoded_faces
from facerec.gallery.health import GalleryHealth, HealthReport
from facerec.gallery.search import Search
from facerec.gallery.sightings import CONFIRMED, CORRECTED, SightingInfo, SightingsMemory, kept_face
from facerec.gallery.strangers import StrangersMemory
from facerec.gallery.suggestions import PAGE, NamedSuggestion, Suggestion, Suggestions, SuggestionsPage
from facerec.gallery.templates import Template, Templates
from facerec.gallery.thresholds import GalleryThresholds
from facerec.gallery.video import LiveFaces, VideoAnswer, video_search
from facerec.gallery.cohort_statistics import bring_statistics_up_to_date
from facerec.openset.cohort import Scorer
from facerec.openset.model_card import cosine_calibration_for, policy_for, scorer_for


def _statistics_function(scorer: Scorer):
    """What the store computes for every face it writes: (means, spreads) of embeddings [N, D]."""
    def of(embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        statistics = scorer.statistics(embeddings)
        return statistics.mean, statistics.sd
    return of


class Gallery:
    def __init__(self, settings: Settings | None = None, pipeline: FacePipeline | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self.pipeline = pipeline or FacePipeline(self.settings)
        # Before any file is created: without a pinned threshold, a missing or unreadable model card is an error.
        self.policy = policy_for(self.settings, self.pipeline.embedder.sha256)
        self.scorer = scorer_for(self.settings, self.policy)  # the score every decision compares (`openset.cohort`)
        self.quality = QualityCheck(self.settings.quality_calibration_path, self.pipeline.embedder)
        home = self.settings.home
        if not home.exists():
            home.mkdir(parents=True, mode=0o700)  # the gallery's faces are its owner's alone
        database = database_file(self.settings.resolved_database_url)
        if database is not None and (not database.exists() or database.stat().st_size == 0):
            refuse_to_replace_saved_index(home)  # gallery.db deleted or emptied: never start over its index
        self.store = Store(self.settings.resolved_database_url)
        self.store.faces.statistics_of = _statistics_function(self.scorer)
        self.model_id = self.pipeline.embedder.model_id
        try:
            self.index = open_index(self.settings, self.store, self.model_id)
        except BaseException:
            self.store.dispose()
            raise
        settings, store, index = self.settings, self.store, self.index
        filled = bring_statistics_up_to_date(store, self.scorer)
        self.thresholds = GalleryThresholds(self.policy, store, index)
        self.sightings = SightingsMemory(store, self.model_id, settings.store_crops, settings.sightings_memory,
                                         per_hour=settings.sightings_per_hour)
        self.strangers = StrangersMemory(store, self.model_id, settings.suggestions, settings.store_crops,
                                         settings.suggestions_days, settings.suggestions_memory)
        self.searching = Search(self.pipeline, store, index, self.thresholds, self.sightings, self.strangers,
                                self.model_id, settings.min_face_size, self.scorer)
        self.enrollment = Enrollment(self.pipeline, store, index, self.thresholds, self.searching, self.quality,
                                     self.model_id, settings.store_crops, settings.min_face_size)
        self.checkup = GalleryHealth(store, index, self.thresholds, self.sightings)
        self.learning = Templates(store, index, self.thresholds, self.searching, self.quality, self.model_id,
                                  settings.store_crops)
        # Grouping stays on raw cosines with the strangers memory as its cohort (measured so; see docs/model.md)
        self.suggesting = Suggestions(store, index, self.thresholds, self.strangers,
                                      cosine_calibration_for(self.settings, self.policy), self.quality, self.model_id)
        self.videos = video_search(settings, self.pipeline, self.searching, self.thresholds, self.sightings, self.quality)
        self.keys = ApiKeys(store)  # the REST API's keys live in the gallery's database; interfaces hold this service
        # One line each for the user (the CLI prints them, the app logs them): what opening had to repair.
        self.notices: list[str] = [self.index.notice] if self.index.notice else []
        if filled:
            self.notices.append(f"computed the cohort statistics of {filled} enrolled face(s), which normalised "
                                "scores need (once, for faces enrolled before them or with another cohort)")
        forgotten = self.sightings.forget_when_disabled()  # privacy mode (or a memory of 0): also those from before
        if forgotten:
            self.notices.append(f"forgot {forgotten} sighting(s) kept before: {self.sightings.why_disabled()}")
        forgotten = self.strangers.forget_when_disabled()  # set off, or privacy mode; else the expired ones
        if forgotten and not self.strangers.enabled and self.settings.suggestions is not None:
            self.notices.append(f"forgot {forgotten} face(s) of people not enrolled kept before: "
                                f"{self.strangers.why_disabled()}")
        if self.settings.suggestions and not self.strangers.enabled:
            self.notices.append(f"suggestions stay off: {self.strangers.why_disabled()}")

    @classmethod
    def open(cls, home: str | Path | None = None, **overrides) -> "Gallery":
        """Open (creating if needed) the gallery in `home` (default: FACEREC_HOME, else ./facerec_home)."""
        return cls(Settings.from_env(home=home, **overrides))

    def __enter__(self) -> "Gallery":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def close(self) -> None:
        """Save the index (a cache; a crash before this costs only a journal replay) and release the database."""
        try:
            self.suggesting.close()  # a grouping under way stops before the database goes
            self.strangers.close()  # the unknown faces an identify queued are kept before the database goes
            self.index.close(self.store)
        finally:
            self.store.dispose()

    # ----- the threshold in force ---------------------------------------------------------------------------
    @property
    def threshold(self) -> float:
        """The score (cohort-normalised; the cosine on a card calibrated on cosines) at or above which a face is
        taken to be an enrolled person, now: derived from the accepted stranger-match rate for the gallery's current
        size (or pinned). See `threshold_in_force`."""
        return self.threshold_in_force().threshold

    def threshold_in_force(self, fpir: float | None = None, threshold: float | None = None,
                           with_people: bool = False) -> ThresholdInForce:
        """The threshold identify and the look-alike check use for this gallery now, with its expected
        stranger-match rate (`facerec.openset.threshold_policy`); `fpir` / `threshold` override the settings for one
        decision. The people count is only reported, so it is read only when asked for."""
        return self.thresholds.in_force(fpir, threshold, with_people)

    def typical_cosine(self, threshold: float) -> float:
        """The cosine two of this gallery's typical faces must reach to score `threshold` (what a score
        threshold means to a reader of raw cosines: REST's `threshold`, Health). The contract:
        `GalleryThresholds.typical_cosine`."""
        return self.thresholds.typical_cosine(threshold)

    def verification_threshold(self, fpir: float | None = None, threshold: float | None = None) -> ThresholdInForce:
        """The threshold verify uses: the same rule for one comparison (its FPIR is the per-comparison FAR), with
        the gallery's own stranger tail where it has one (the photos compared are likely of its population)."""
        return self.thresholds.for_verification(fpir, threshold)

    # ----- reading photos -------------------------------------------------------------------------------
    def read(self, photo: ImageInput, label: str | None = None) -> Photo:
        """Decode a photo once (to detect, enroll or identify from it); `label` names it in error messages."""
        return self.pipeline.read(photo, label)

    def detect(self, photo: ImageInput | Photo) -> tuple[Photo, list[DetectedFace]]:
        """Decode and detect: what the UI draws before the user picks a face."""
        return decoded_faces(self.pipeline, photo)

    # ----- enrollment ------------------------------------------------------------------------------------
    def enroll(self, photo: ImageInput | Photo, name: str, face_index: int | None = None,
               allow_lookalike: bool = False, note: str | None = None,
               allow_low_quality: bool = False) -> EnrollResult:
        """Enroll a new person from one photo. The contract: `Enrollment.enroll`."""
        return self.enrollment.enroll(photo, name, face_index, allow_lookalike, note, allow_low_quality)

    def add_photo(self, identity: str | int, photo: ImageInput | Photo, face_index: int | None = None,
                  allow_mismatch: bool = False, allow_low_quality: bool = False) -> EnrollResult:
        """Add another photo of an enrolled person; `lookalikes` in the result lists other people it resembles.
        The contract: `Enrollment.add_photo`."""
        return self.enrollment.add_photo(identity, photo, face_index, allow_mismatch, allow_low_quality)

    def add_embeddings(self, entries: list[dict]) -> list[int]:
        """Bulk enrollment of precomputed embeddings in one transaction (evaluation, imports, benchmarks).
        The contract: `Enrollment.add_embeddings`."""
        return self.enrollment.add_embeddings(entries)

    def enrollment_quality(self, photo: ImageInput | Photo, face_index: int | None = None,
                           faces: list[DetectedFace] | None = None) -> EnrollmentQuality | None:
        """How likely the photo's face is to be recognised later if enrolled (None: no calibration ships).
        `faces`: what `detect` found in this decoded `photo`, so a caller that has just drawn them (the Enroll
        tab) does not run the detector a second time."""
        _photo, face, crop, _embedding = self.enrollment.one_face(photo, face_index, faces)
        return self.quality.assess(face, crop)

    # ----- search ---------------------------------------------------------------------------------------
    def identify(self, photo: ImageInput | Photo, top_k: int = 5, threshold: float | None = None,
                 fpir: float | None = None, remember: bool = True,
                 not_below_default: bool = False) -> list[FaceMatch]:
        """Every face in the photo -> best identity (or unknown below the threshold) and top-k candidates.
        The contract: `Search.identify`."""
        return self.searching.identify(photo, top_k, threshold, fpir, remember, not_below_default)

    def identify_video(self, path: str | Path, **options) -> VideoAnswer:
        """Every face of a video followed across frames, one answer per track. The contract: `VideoSearch.identify`."""
        return self.videos.identify(path, **options)

    def live(self, fps: float = 10.0) -> LiveFaces:
        """A camera's faces followed frame by frame (`LiveFaces.see`), answered as their tracks grow."""
        return self.videos.live(fps)

    def search(self, embeddings: np.ndarray, top_k: int = 5) -> list[list[Candidate]]:
        """Top-k identities (best face per identity) for each query embedding [Q, 512].
        The contract: `Search.search`."""
        return self.searching.search(embeddings, top_k)

    def verify(self, photo_a: ImageInput | Photo, photo_b: ImageInput | Photo,
               threshold: float | None = None, fpir: float | None = None,
               face_a: int | None = None, face_b: int | None = None) -> VerifyResult:
        """Same person or not, at the threshold the policy gives one comparison. The contract: `Search.verify`."""
        return self.searching.verify(photo_a, photo_b, threshold, fpir, face_a, face_b)

    # ----- the sightings memory (`facerec.gallery.sightings`) ---------------------------------------------------
    def confirm_sighting(self, sighting_id: int, learn_by: str | None = None) -> SightingInfo:
        """The identification kept as this sighting was right. With `learn_by` (who confirmed it, for a caller with
        the admin password or an admin key) its face is also learned as a template (`facerec.gallery.templates`)."""
        info = self.sightings.confirm(sighting_id)
        if learn_by:
            info.learning = self.learning.learn(sighting_id, learn_by).to_dict()
        return info

    def correct_sighting(self, sighting_id: int, identity: str | int, learn_by: str | None = None) -> SightingInfo:
        """The face kept as this sighting is `identity`; what it taught another person is undone
        (`Templates.forget_learned_from`), and with `learn_by` it is learned for this one."""
        info = self.sightings.correct(sighting_id, identity)
        undone = self.learning.forget_learned_from(sighting_id)
        info.undone = undone.to_dict() if undone.removed else None
        if learn_by:
            info.learning = self.learning.learn(sighting_id, learn_by).to_dict()
        return info

    def reject_sighting(self, sighting_id: int) -> SightingInfo:
        """The face kept as this sighting is nobody enrolled: forget it, and undo what it taught
        (`Templates.forget_learned_from`), also when the sighting itself was cleared or evicted meanwhile: a
        learned template keeps its sighting's id."""
        undone = self.learning.forget_learned_from(sighting_id)
        try:
            info = self.sightings.reject(sighting_id)
        except (UnknownSighting, InvalidArgument):  # not kept (any more), or the memory is off: undone all the same
            if not undone.removed:
                raise
            info = SightingInfo(int(sighting_id), undone.name, "rejected", undone.similarity)
        info.undone = undone.to_dict() if undone.removed else None
        return info

    def templates(self, identity: str | int) -> list[Template]:
        """The faces a person is searched by, each with where it came from (enrolled, added, learned)."""
        return self.learning.of(identity)

    def remove_template(self, face_id: int) -> Template:
        """Remove one of a person's faces (never their last). The contract: `Templates.remove`."""
        return self.learning.remove(face_id)

    def label_face(self, embedding: np.ndarray, identity: str | int, confirmed: bool = False,
                   photo: Photo | None = None, face: DetectedFace | None = None, learn_by: str | None = None,
                   crop: np.ndarray | None = None) -> SightingInfo:
        """A face identify did not keep (its `FaceMatch.embedding`, or a video track's pool) is `identity`: kept as a
        corrected sighting, or with `confirmed` as a confirmed one (a named face past the pace of automatic
        sightings). With its `face` and the `photo` it was found in, or its aligned `crop` (a track's best view: a
        video keeps no photo), the aligned face is kept too, and with `learn_by` learned as a template."""
        if crop is None and photo is not None and face is not None:
            crop = self.pipeline.embed(photo, [face])[0][0]
        kept = None if face is None else kept_face(face, crop)
        info = self.sightings.label_face(embedding, identity, CONFIRMED if confirmed else CORRECTED, kept)
        if learn_by:
            info.learning = self.learning.learn(info.id, learn_by).to_dict()
        return info

    # ----- suggested people (`facerec.gallery.suggestions`) -----------------------------------------------------
    @property
    def suggestions_on(self) -> bool:
        """Whether unknown faces are kept to suggest people (opt-in, never in privacy mode)."""
        return self.strangers.enabled

    def suggestions_off_because(self) -> str:
        return self.strangers.why_disabled()

    def suggestions(self, offset: int = 0, limit: int = PAGE, group_first: bool = False) -> SuggestionsPage:
        """A page of the people seen again and again, not enrolled. The contract: `Suggestions.list`."""
        return self.suggesting.list(offset, limit, group_first=group_first)

    def suggestion(self, suggestion_id: int) -> Suggestion:
        return self.suggesting.get(suggestion_id)

    def suggestion_faces(self, face_ids: list[int]) -> dict[int, bytes]:
        """The aligned faces (JPEG) of a suggestion's faces, by id."""
        return self.suggesting.crops(face_ids)

    def name_suggestion(self, suggestion_id: int, name: str, note: str | None = None) -> NamedSuggestion:
        """Enroll a suggested person from their best faces. The contract: `Suggestions.name`."""
        return self.suggesting.name(suggestion_id, name, note)

    def dismiss_suggestion(self, suggestion_id: int) -> int:
        """Forget a suggestion's faces; how many. The contract: `Suggestions.dismiss`."""
        return self.suggesting.dismiss(suggestion_id)

    def forget_strangers(self) -> int:
        """Forget every kept face of people not enrolled (suggestions and faces not yet in one); how many."""
        return self.strangers.clear()

    def clear_sightings(self) -> int:
        return self.sightings.clear()

    # ----- management -----------------------------------------------------------------------------------
    def list(self, query: str | None = None) -> list[IdentityInfo]:
        """Enrolled identities by name; `query` filters by case-insensitive substring."""
        return people.list_people(self.store, query)

    def list_page(self, query: str | None = None, offset: int = 0, limit: int = 50) -> tuple[list[IdentityInfo], int]:
        """One page of `list` and how many match in all. The contract: `people.list_page`."""
        return people.list_page(self.store, query, offset, limit)

    def get(self, identity: str | int) -> IdentityInfo:
        return people.get(self.store, identity)

    def face_crop(self, face_id: int) -> bytes | None:
        """The stored JPEG crop of a face (None in privacy mode)."""
        return self.store.faces.crop(face_id)

    def rename(self, identity: str | int, new_name: str) -> IdentityInfo:
        return people.rename(self.store, identity, new_name)

    def delete(self, identity: str | int) -> IdentityInfo:
        """Remove a person and all their faces from the database and the index."""
        info = people.delete(self.store, identity)
        self.index.after_write(self.store)
        return info

    def stats(self) -> dict:
        identities, faces = self.store.counts()
        models = self.store.faces.model_ids()
        rule = self.threshold_in_force(with_people=True)
        return {"identities": identities, "faces": faces, "model_id": self.model_id, "gallery_models": models,
                "threshold": rule.threshold, "threshold_policy": rule.to_dict(),
                "index": self.index.kind, "index_size": len(self.index),
                "home": str(self.settings.home), "database": self.store.display_url,
                "store_crops": self.settings.store_crops, "model_warning": self.model_warning(),
                "sightings": self.sightings.count(),
                "sightings_memory": self.sightings.capacity if self.sightings.enabled else 0,
                "embedder": self.pipeline.embedder.self_check.to_dict()}

    def model_warning(self) -> str | None:
        return reindex.model_warning(self.store, self.model_id)

    def warnings(self) -> list[str]:
        """One line each for whoever opens the gallery: embeddings of another model, a calibration made for
        another model file."""
        return [w for w in (self.model_warning(), self.policy.calibration.warning) if w]

    def people_count(self) -> int:
        return self.store.counts()[0]

    @property
    def embedder_check(self):
        """What the embedder's self-check at load found (`facerec.faces.embedder_check`): shown by Health."""
        return self.pipeline.embedder.self_check

    def threshold_growth(self, fpir: float | None = None) -> list[ThresholdInForce]:
        """The threshold in force (and the expected true-match rate) as a gallery grows: 1 ... 1,000,000 faces."""
        return self.policy.growth(fpir=fpir)

    def health(self, top_pairs: int = 10) -> HealthReport:
        """The embedding metrics over every enrolled face, plus confusable pairs and suspected duplicates.
        The contract: `GalleryHealth.report`."""
        return self.checkup.report(top_pairs)

    def reindex(self) -> int:
        """Re-embed every face from its stored crop with the loaded model; returns how many were re-embedded.
        The contract: `reindex.reindex`."""
        count = reindex.reindex(self.store, self.index, self.pipeline.embedder, self.model_id)
        self.thresholds.forget_population()  # the tail of the old embeddings no longer holds
        return count

    # ----- export / import ------------------------------------------------------------------------------
    def export(self, path: str | Path, include_crops: bool = True) -> int:
        """Write a portable zip (gallery.json + embeddings.npy + optional crops/); returns the face count.
        The contract: `transfer.export`."""
        return transfer.export(self.store, path, include_crops)

    def import_(self, path: str | Path, limits: ImportLimits = ImportLimits()) -> dict:
        """Add the people of an exported zip, all or nothing. The contract: `transfer.import_`."""
        return transfer.import_(self.store, self.index, self.pipeline.embedder, self.model_id,
                                self.settings.store_crops, path, limits)
