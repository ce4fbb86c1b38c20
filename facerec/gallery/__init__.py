"""The Gallery: facerec's public Python API (`facerec.Gallery`), the one object to enroll, identify and verify with.

    with facerec.Gallery.open("my_gallery") as gallery:
        gallery.enroll("ada.jpg", "Ada")
        for face in gallery.identify("crowd.jpg"):
            print(face.name, face.similarity)

Its verbs (14, counted by `tests/test_public_api.py`): `open`, `close`, `enroll`, `add_photo`, `identify`,
`identify_video`, `verify`, `people`, `rename`, `delete`, `export`, `import_`, `health`, `services`; no public
attributes. Each verb's docstring states its inputs, outputs and units; docs/python.md has them all, with the
errors (`facerec.errors`) each raises.

The gallery is built once from Settings by the composition root (`facerec.gallery.composition`): the store
(`facerec.storage`: the database, the source of truth), the vector index (`facerec.vectors`: follows the database)
and the photo pipeline, with the services beside this file, each given only the parts it uses. What the page, REST
and the CLI need beyond the verbs (sightings feedback, templates, suggestions, API keys, reading photos, the
thresholds in force, maintenance, a live camera) they get from `services()`, never the parts themselves.

The vector index is brought up to date from the database's journal before every search, so several threads and
processes can share one gallery. Every check that decides whether a write may happen (name taken, same photo
already enrolled, look-alike) is repeated inside the write transaction, which the database serialises across
threads and processes, so two simultaneous enrollments cannot both pass it. A write that is refused changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from facerec.faces.image import ImageInput
from facerec.faces.pipeline import FacePipeline, Photo
from facerec.gallery import transfer
from facerec.gallery.regroup import Regrouped
from facerec.formats.archive import ImportLimits
from facerec.gallery.composition import Services, compose
from facerec.gallery.health import HealthReport
from facerec.gallery.results import EnrollResult, FaceMatch, IdentityInfo, VerifyResult
from facerec.gallery.video import VideoAnswer, VideoLimits
from facerec.settings import Settings


class Gallery:
    """Enrolled people and the verbs over them. Photos (`ImageInput`) are a path, bytes, a PIL image or an
    RGB uint8 array [H, W, 3]; a `similarity` is a cosine in [-1, 1] and `threshold` the cosine that pair had
    to reach (decisions compare the cohort-normalised `score`); an identity is a name or an id."""

    def __init__(self, settings: Settings | None = None, pipeline: FacePipeline | None = None) -> None:
        """Open the gallery `settings` describe (default: from the environment, `Settings.from_env`);
        `pipeline`: an already loaded photo pipeline to share between galleries."""
        self._parts = compose(settings or Settings.from_env(), pipeline)

    @classmethod
    def open(cls, home: str | Path | None = None, **overrides) -> Gallery:
        """Open (creating if needed) the gallery in the folder `home` (default: FACEREC_HOME, else ./facerec_home);
        `overrides`: any `Settings` field, e.g. `fpir=0.001`. Raises `InvalidArgument` for an unusable setting."""
        return cls(Settings.from_env(home=home, **overrides))

    def __enter__(self) -> Gallery:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def close(self) -> None:
        """Save the vector index (a cache; a crash before this costs only a journal replay) and release the
        database. A closed gallery is not used again."""
        self._parts.close()

    def services(self) -> Services:
        """The narrow services an interface needs beyond these verbs (`facerec.gallery.composition.Services`):
        photos, thresholds, feedback, templates, directory, suggestions, strangers, keys, maintenance, video."""
        return self._parts.services

    # ----- enrollment ------------------------------------------------------------------------------------
    def enroll(self, photo: ImageInput | Photo, name: str, face_index: int | None = None,
               allow_lookalike: bool = False, note: str | None = None,
               allow_low_quality: bool = False) -> EnrollResult:
        """Enroll a new person `name` from the one face of `photo` (or its face `face_index`, 0-based, when it
        shows several). Returns an `EnrollResult` (the identity's id and name, the face's id, the enrollment
        quality). Raises `NoFace`, `MultipleFaces` (several faces, no `face_index`), `NameTaken`,
        `DuplicatePhoto`, `PossibleDuplicate` (resembles someone enrolled; `allow_lookalike` enrolls anyway),
        `LowQuality` (`allow_low_quality` enrolls anyway), `InvalidImage`. The contract: `Enrollment.enroll`."""
        return self._parts.enrollment.enroll(photo, name, face_index, allow_lookalike, note, allow_low_quality)

    def add_photo(self, identity: str | int, photo: ImageInput | Photo, face_index: int | None = None,
                  allow_mismatch: bool = False, allow_low_quality: bool = False) -> EnrollResult:
        """Add another photo of the enrolled `identity`. Returns an `EnrollResult`; its `lookalikes` lists other
        people it resembles. Raises `UnknownIdentity`, `NoFace`, `MultipleFaces`, `DuplicatePhoto`,
        `IdentityMismatch` (it does not look like them; `allow_mismatch` adds it anyway), `LowQuality`,
        `InvalidImage`. The contract: `Enrollment.add_photo`."""
        return self._parts.enrollment.add_photo(identity, photo, face_index, allow_mismatch, allow_low_quality)

    # ----- search ---------------------------------------------------------------------------------------
    def identify(self, photo: ImageInput | Photo, top_k: int = 5, threshold: float | None = None,
                 fpir: float | None = None, remember: bool = True,
                 not_below_default: bool = False) -> list[FaceMatch]:
        """Every face in `photo` -> a `FaceMatch` each: its `face` (box in pixels), the best identity's `name`
        (None: nobody enrolled reaches the threshold in force), its `similarity` (cosine), and the
        `top_k` candidates. `fpir` (accepted stranger-match rate, a fraction in (0, 1)) or `threshold` (a score)
        override the settings for this call; `remember=False` keeps no sighting; `not_below_default` never loosens
        the default (a caller without the admin password). An empty list: no face. Raises `InvalidImage`.
        The contract: `Search.identify`."""
        return self._parts.searching.identify(photo, top_k, threshold, fpir, remember, not_below_default)

    def identify_video(self, path: str | Path, top_k: int = 3, fpir: float | None = None,
                       threshold: float | None = None, remember: bool = True, not_below_default: bool = False,
                       limits: VideoLimits | None = None, progress: Callable[[int, int], None] | None = None,
                       label: str | None = None) -> VideoAnswer:
        """Every face of the video file at `path` followed across frames -> a `VideoAnswer` whose `tracks` hold
        one `TrackMatch` per face followed (its `name`, None when unknown, and its `FaceMatch`). `top_k`, `fpir`,
        `threshold`, `remember`, `not_below_default` as for `identify`; `limits`: tighter bounds for this call
        (`facerec.gallery.video.ANONYMOUS_LIMITS` for a caller without the password); `progress(frames done,
        frames in all)`; `label`: the file's name in messages. Raises `InvalidVideo`, `VideoTooLarge`. The
        contract: `VideoSearch.identify`."""
        return self._parts.videos.identify(path, top_k, fpir, threshold, remember, not_below_default, limits,
                                           progress, label)

    def verify(self, photo_a: ImageInput | Photo, photo_b: ImageInput | Photo,
               threshold: float | None = None, fpir: float | None = None,
               face_a: int | None = None, face_b: int | None = None) -> VerifyResult:
        """Whether the faces of two photos are the same person -> a `VerifyResult` (`same_person`, `similarity`
        (cosine), the `threshold` (cosine) it had to reach), at the threshold the policy gives one comparison
        (`fpir` is then the false-accept rate, a fraction). Raises `NoFace`, `MultipleFaces`,
        `InvalidImage`. The contract: `Search.verify`."""
        return self._parts.searching.verify(photo_a, photo_b, threshold, fpir, face_a, face_b)

    # ----- the people enrolled ----------------------------------------------------------------------------
    def people(self, query: str | None = None) -> list[IdentityInfo]:
        """Enrolled people by name -> `IdentityInfo` (id, name, face count, note); `query` keeps the names that
        contain it, ignoring case."""
        return self._parts.directory.list(query)

    def rename(self, identity: str | int, new_name: str) -> IdentityInfo:
        """Give `identity` (a name or id) the name `new_name`. Raises `UnknownIdentity`, `NameTaken`."""
        return self._parts.directory.rename(identity, new_name)

    def delete(self, identity: str | int) -> IdentityInfo:
        """Remove a person and all their faces from the database and the index; returns who was removed.
        Raises `UnknownIdentity`."""
        return self._parts.directory.delete(identity)

    def merge(self, source: str | int, target: str | int, force: bool = False) -> Regrouped:
        """`source` and `target` are one person: every face, sighting and negative example of `source` becomes
        `target`'s, and `source` is gone. Refused (InvalidArgument) when no face of one matches a face of the other
        at verify's threshold, unless `force`. The contract: `facerec.gallery.regroup`."""
        return self._parts.regroup.merge(source, target, force)

    def move_face(self, face_id: int, to: str | int | None = None, new_name: str | None = None,
                  force: bool = False) -> Regrouped:
        """Move one face (its id: `templates`) to the enrolled person `to`, or to a new person `new_name`."""
        return self._parts.regroup.move(face_id, to, new_name, force)

    def health(self, top_pairs: int = 10) -> HealthReport:
        """The embedding metrics over every enrolled face, the `top_pairs` most confusable pairs of people and
        suspected duplicates -> a `HealthReport`. The contract:
        `GalleryHealth.report`."""
        return self._parts.checkup.report(top_pairs)

    # ----- export / import ------------------------------------------------------------------------------
    def export(self, path: str | Path, include_crops: bool = True) -> int:
        """Write the gallery to the zip file `path` (gallery.json + embeddings.npy + the aligned faces unless
        `include_crops` is False); returns how many faces it holds. The contract: `transfer.export`."""
        return transfer.export(self._parts.store, path, include_crops)

    def import_(self, path: str | Path, limits: ImportLimits = ImportLimits()) -> dict:
        """Add the people of a zip written by `export`, all or nothing -> {"added": faces added,
        "skipped": faces already here (same photo and face)}. Raises `InvalidArgument` (not an export, past
        `limits`, or a name taken), `ModelMismatch`. The contract: `transfer.import_`."""
        parts = self._parts
        return transfer.import_(parts.store, parts.index, parts.pipeline.embedder, parts.model_id,
                                parts.settings.store_crops, path, limits)
