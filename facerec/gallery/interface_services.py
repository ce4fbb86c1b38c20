"""What an interface may hold beside the public Gallery (`Gallery.services()`): narrow services, each exposing
exactly the methods docs/python.md lists for it (`tests/test_public_api.py` counts them against that table).

The services the gallery runs on are wider: they share parts (store, index, pipeline) and carry lifecycle calls
(`settle`, `close`, `refresh`) and the calls other services make (`learn`, `synced`, `say_not`). An interface that
reached them could close a memory under the gallery or read its database; here it gets a door per service that
opens on what the docs promise and nothing else, every part behind it private."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from facerec.access.api_keys import ApiKeys
from facerec.gallery.directory import Directory
from facerec.gallery.feedback import SightingsFeedback
from facerec.gallery.camera_faces import CameraFaces
from facerec.gallery.library_groups import LibraryGroups
from facerec.gallery.maintenance import Maintenance
from facerec.gallery.negatives import Negative, Negatives
from facerec.gallery.photos import Photos
from facerec.gallery.results import IdentityInfo
from facerec.gallery.strangers import StrangersMemory
from facerec.gallery.suggestions import PAGE, NamedSuggestion, Suggestion, Suggestions, SuggestionsPage
from facerec.gallery.templates import Template, Templates
from facerec.gallery.thresholds import GalleryThresholds
from facerec.gallery.video import LiveFaces, VideoAnswer, VideoSearch
from facerec.openset.threshold_policy import ThresholdInForce
from facerec.settings import Settings
from facerec.video.decode import VideoInfo, VideoLimits


class Thresholds:
    """The threshold in force, for identify, verify and Health, in words an interface shows."""

    def __init__(self, thresholds: GalleryThresholds) -> None:
        self._thresholds = thresholds

    def in_force(self, fpir: float | None = None, threshold: float | None = None,
                 with_people: bool = False) -> ThresholdInForce:
        """The threshold identify uses now (`GalleryThresholds.in_force`)."""
        return self._thresholds.in_force(fpir, threshold, with_people)

    def for_verification(self, fpir: float | None = None, threshold: float | None = None) -> ThresholdInForce:
        """The threshold verify uses (`GalleryThresholds.for_verification`)."""
        return self._thresholds.for_verification(fpir, threshold)

    def typical_cosine(self, threshold: float) -> float:
        """The cosine two of this gallery's typical faces must reach for the score `threshold`."""
        return self._thresholds.typical_cosine(threshold)

    def growth(self, fpir: float | None = None) -> list[ThresholdInForce]:
        """The threshold as the gallery grows, 1 ... 1,000,000 faces."""
        return self._thresholds.growth(fpir)


class PersonTemplates:
    """The faces a person is searched by, and where each came from; removing one."""

    def __init__(self, templates: Templates) -> None:
        self._templates = templates

    def of(self, identity: str | int) -> list[Template]:
        return self._templates.of(identity)

    def remove(self, face_id: int) -> Template:
        """Remove one (never a person's last); a learned one gives back the template it replaced."""
        return self._templates.remove(face_id)


class NegativeExamples:
    """Faces an admin said are not a person ("not this person"): listed and undone (they are made through
    `feedback`)."""

    def __init__(self, negatives: Negatives) -> None:
        self._negatives = negatives

    def of(self, identity: str | int) -> list[Negative]:
        return self._negatives.of(identity)

    def remove(self, negative_id: int) -> int:
        """Undo one; the person's id."""
        return self._negatives.remove(negative_id)


class People:
    """The enrolled people, a page at a time, and their stored crops (the verbs rename, delete and list them)."""

    def __init__(self, directory: Directory) -> None:
        self._directory = directory

    def page(self, query: str | None = None, offset: int = 0, limit: int = 50) -> tuple[list[IdentityInfo], int]:
        return self._directory.page(query, offset, limit)

    def get(self, identity: str | int) -> IdentityInfo:
        return self._directory.get(identity)

    def count(self) -> int:
        return self._directory.count()

    def face_crop(self, face_id: int) -> bytes | None:
        """A face's stored JPEG crop (None where crops are not kept)."""
        return self._directory.face_crop(face_id)

    def negative_crop(self, negative_id: int) -> bytes | None:
        """A negative example's stored JPEG crop (None where crops are not kept)."""
        return self._directory.negative_crop(negative_id)


class SuggestedPeople:
    """People seen again and again but not enrolled: to name (enroll) or dismiss (forget)."""

    def __init__(self, suggestions: Suggestions) -> None:
        self._suggestions = suggestions

    def list(self, offset: int = 0, limit: int = PAGE, group_first: bool = False) -> SuggestionsPage:
        """One page, from the last grouping (`group_first`: wait for a fresh one, as the CLI does)."""
        return self._suggestions.list(offset, limit, group_first=group_first)

    def get(self, suggestion_id: int) -> Suggestion:
        return self._suggestions.get(suggestion_id)

    def crops(self, face_ids: list[int]) -> dict[int, bytes]:
        return self._suggestions.crops(face_ids)

    def name(self, suggestion_id: int, name: str, note: str | None = None) -> NamedSuggestion:
        return self._suggestions.name(suggestion_id, name, note)

    def dismiss(self, suggestion_id: int) -> int:
        return self._suggestions.dismiss(suggestion_id)


class UnknownFaces:
    """Whether the faces of people not enrolled are kept (the operator opted in), and forgetting them all."""

    def __init__(self, strangers: StrangersMemory) -> None:
        self._strangers = strangers

    @property
    def enabled(self) -> bool:
        return self._strangers.enabled

    def why_disabled(self) -> str:
        return self._strangers.why_disabled()

    def clear(self) -> int:
        """Forget every kept face; how many went."""
        return self._strangers.clear()


class Videos:
    """Videos and a live camera beside the verb `Gallery.identify_video`: what a file's container says, the answer
    drawn back, a camera's frames."""

    def __init__(self, videos: VideoSearch) -> None:
        self._videos = videos

    def probe(self, path: str | Path, label: str | None = None) -> VideoInfo:
        return self._videos.probe(path, label)

    def annotate(self, path: str | Path, answer: VideoAnswer, labels: list[str], out: str | Path,
                 limits: VideoLimits | None = None, progress: Callable[[int, int], None] | None = None) -> Path:
        return self._videos.annotate(path, answer, labels, out, limits, progress)

    def live(self, fps: float = 10.0) -> LiveFaces:
        """One camera's faces as its frames come (`LiveFaces.see`)."""
        return self._videos.live(fps)

    def camera(self, fps: float) -> CameraFaces:
        """A watched camera's faces, each track decided once (`CameraFaces.see`)."""
        return CameraFaces(self._videos, fps)


@dataclass(frozen=True)
class Services:
    """What an interface may hold beside the public Gallery: narrow services, each one concept."""
    settings: Settings
    photos: Photos  # decode, detect, enrollment quality
    thresholds: Thresholds  # the threshold in force, for identify, verify and Health
    feedback: SightingsFeedback  # confirm, correct, reject, not this person, label
    templates: PersonTemplates  # the faces a person is searched by
    negatives: NegativeExamples  # faces an admin said are not a person ("not this person")
    directory: People  # the people, paged; their stored crops
    suggestions: SuggestedPeople  # people seen again and again, not enrolled
    strangers: UnknownFaces  # whether unknown faces are kept, and forgetting them
    keys: ApiKeys  # the REST API's keys
    maintenance: Maintenance  # stats, warnings, notices, the embedder's check, reindex
    video: Videos  # videos and a live camera
    library: LibraryGroups  # a photo library's unknown faces grouped into people
