"""The composition root: the one place a gallery's parts are built from Settings, once, and wired together.

`compose` opens the store (the database, the source of truth) and the vector index (follows the database), loads
the photo pipeline and the threshold policy, and builds the services beside this file, each given only the parts
it uses. It returns `Parts`, which the public `facerec.Gallery` keeps privately; the interfaces (the page, REST,
the CLI) receive the narrow `Services` (`Gallery.services()`, `facerec.gallery.interface_services`) for what the
public verbs do not offer, and never the store, the index or the pipeline (`tests/test_public_api.py` checks their
imports and counts each service's public names against docs/python.md).

Opening reports, one line each in `Parts.notices`, what it had to repair or forget."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from facerec.access.api_keys import ApiKeys
from facerec.faces.pipeline import FacePipeline
from facerec.faces.quality import QualityCheck
from facerec.gallery.cohort_statistics import bring_statistics_up_to_date
from facerec.gallery.core import Core
from facerec.gallery.directory import Directory
from facerec.gallery.enrollment import Enrollment
from facerec.gallery.feedback import SightingsFeedback
from facerec.gallery.health import GalleryHealth
from facerec.gallery.library_groups import LibraryGroups
from facerec.gallery.interface_services import (NegativeExamples, People, PersonTemplates, Services,
                                                SuggestedPeople, Thresholds, UnknownFaces, Videos)
from facerec.gallery.negatives import Negatives
from facerec.gallery.maintenance import Maintenance
from facerec.gallery.photos import Photos
from facerec.gallery.regroup import Regroup
from facerec.gallery.search import Search
from facerec.gallery.sightings import SightingsMemory
from facerec.gallery.strangers import StrangersMemory
from facerec.gallery.suggestions import Suggestions
from facerec.gallery.templates import Templates
from facerec.gallery.thresholds import GalleryThresholds
from facerec.gallery.unkept_faces import UnkeptFaces
from facerec.gallery.video import VideoSearch
from facerec.openset.cohort import Scorer
from facerec.openset.model_card import cosine_calibration_for, policy_for, scorer_for
from facerec.openset.threshold_policy import ThresholdPolicy
from facerec.settings import Settings
from facerec.storage import Store, database_file
from facerec.vectors import open_index
from facerec.vectors.base import VectorIndex
from facerec.vectors.saved_files import refuse_to_replace_saved_index


@dataclass
class Parts:
    """Everything a gallery is made of (for the Gallery, the package's own tests and the evaluation harness)."""
    settings: Settings
    pipeline: FacePipeline
    policy: ThresholdPolicy
    scorer: Scorer
    quality: QualityCheck
    store: Store
    index: VectorIndex
    model_id: str
    thresholds: GalleryThresholds
    sightings: SightingsMemory
    strangers: StrangersMemory
    searching: Search
    enrollment: Enrollment
    checkup: GalleryHealth
    learning: Templates
    suggesting: Suggestions
    videos: VideoSearch
    keys: ApiKeys
    directory: Directory  # the people: the verbs list, rename and delete them
    regroup: Regroup  # the verbs merge and move_face
    notices: list[str] = field(default_factory=list)
    services: Services | None = None

    def close(self) -> None:
        """Save the index (a cache; a crash before this costs only a journal replay) and release the database."""
        try:
            self.suggesting.close()  # a grouping under way stops before the database goes
            self.strangers.close()  # the unknown faces an identify queued are kept before the database goes
            self.index.close(self.store)
        finally:
            self.store.dispose()


def _statistics_function(scorer: Scorer):
    """What the store computes for every face it writes: (means, spreads) of embeddings [N, D]."""
    def of(embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        statistics = scorer.statistics(embeddings)
        return statistics.mean, statistics.sd
    return of


def compose(settings: Settings, pipeline: FacePipeline | None = None) -> Parts:
    """Build a gallery's parts from `settings` (creating its home and database when new)."""
    pipeline = pipeline or FacePipeline(settings)
    # Before any file is created: without a pinned threshold, a missing or unreadable model card is an error.
    policy = policy_for(settings, pipeline.embedder.sha256)
    scorer = scorer_for(settings, policy)  # the score every decision compares (`openset.cohort`)
    quality = QualityCheck(settings.quality_calibration_path, pipeline.embedder)
    home = settings.home
    if not home.exists():
        home.mkdir(parents=True, mode=0o700)  # the gallery's faces are its owner's alone
    database = database_file(settings.resolved_database_url)
    if database is not None and (not database.exists() or database.stat().st_size == 0):
        refuse_to_replace_saved_index(home)  # gallery.db deleted or emptied: never start over its index
    store = Store(settings.resolved_database_url)
    store.faces.statistics_of = _statistics_function(scorer)
    model_id = pipeline.embedder.model_id
    try:
        index = open_index(settings, store, model_id)
    except BaseException:
        store.dispose()
        raise
    filled = bring_statistics_up_to_date(store, scorer)
    thresholds = GalleryThresholds(policy, store, index)
    core = Core(settings=settings, pipeline=pipeline, store=store, index=index, policy=policy, thresholds=thresholds,
                scorer=scorer, quality=quality, model_id=model_id)
    sightings, strangers = SightingsMemory(core), StrangersMemory(core)
    searching = Search(core, memory=sightings, strangers=strangers)
    enrollment = Enrollment(core, search=searching)
    learning = Templates(core, search=searching)
    # Grouping stays on raw cosines with the strangers memory as its cohort (measured so; see docs/model.md)
    cosines = cosine_calibration_for(settings, policy)
    suggesting = Suggestions(core, memory=strangers, calibration=cosines)
    videos = VideoSearch(core, searching=searching, memory=sightings, strangers=strangers)
    health = GalleryHealth(core, memory=sightings, usable=lambda ids: sightings.usable(ids, quality))
    parts = Parts(settings=settings, pipeline=pipeline, policy=policy, scorer=scorer, quality=quality, store=store,
                  index=index, model_id=model_id, thresholds=thresholds, sightings=sightings, strangers=strangers,
                  searching=searching, enrollment=enrollment, checkup=health, learning=learning,
                  suggesting=suggesting, videos=videos, keys=ApiKeys(store), directory=Directory(core),
                  regroup=Regroup(core, search=searching))
    parts.notices = _opening_notices(parts, filled)
    negatives = Negatives(core)
    feedback = SightingsFeedback(core, sightings=sightings, templates=learning, negatives=negatives,
                                 unkept=UnkeptFaces(store, model_id, settings.store_crops))
    parts.services = Services(
        settings=settings, photos=Photos(core, enrollment=enrollment), thresholds=Thresholds(thresholds),
        feedback=feedback, templates=PersonTemplates(learning), negatives=NegativeExamples(negatives),
        directory=People(parts.directory), suggestions=SuggestedPeople(suggesting), strangers=UnknownFaces(strangers),
        keys=parts.keys, maintenance=Maintenance(core, sightings=sightings, notices=parts.notices),
        video=Videos(videos), library=LibraryGroups(cosines))
    return parts


def _opening_notices(parts: Parts, filled: int) -> list[str]:
    """One line each for the user (the CLI prints them, the app logs them): what opening had to repair."""
    notices = [parts.index.notice] if parts.index.notice else []
    if filled:
        notices.append(f"computed the cohort statistics of {filled} enrolled face(s), which normalised "
                       "scores need (once, for faces enrolled before them or with another cohort)")
    forgotten = parts.sightings.forget_when_disabled()  # privacy mode (or a memory of 0): also those from before
    if forgotten:
        notices.append(f"forgot {forgotten} sighting(s) kept before: {parts.sightings.why_disabled()}")
    strangers, settings = parts.strangers, parts.settings
    forgotten = strangers.forget_when_disabled()  # set off, or privacy mode; else the expired ones
    if forgotten and not strangers.enabled and settings.suggestions is not None:
        notices.append(f"forgot {forgotten} face(s) of people not enrolled kept before: {strangers.why_disabled()}")
    if settings.suggestions and not strangers.enabled:
        notices.append(f"suggestions stay off: {strangers.why_disabled()}")
    return notices


def parts_of(gallery) -> Parts:
    """The parts behind an open `facerec.Gallery`: for the package's own tests, benchmarks and the evaluation
    harness, which measure them; the interfaces use `Gallery.services()` instead."""
    return gallery._parts
