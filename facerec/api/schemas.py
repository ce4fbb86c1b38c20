"""The JSON the REST API answers with, as pydantic models: they make the OpenAPI document, and each is built from
the `to_dict()` of the Gallery result it stands for, so the API says what the CLI's `--json` says."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from facerec.faces.detect import FoundFaces
from facerec.gallery.results import EnrollResult, IdentityInfo
from facerec.gallery.suggestions import SHOWN_FACES
from facerec.openset.threshold_policy import ThresholdInForce
from facerec.words.threshold import with_sentence, worded
from facerec.words.phrasing import faces_left_out_message


LABEL_TOKEN = ("admin keys only, for a face or track not kept as a sighting: a signed token, valid for an hour, that "
               "labels it later (POST /sightings) or says who it is not (POST /negatives); it holds the face's "
               "embedding and aligned face, so keep it as you keep faces")

class Error(BaseModel):
    error: str = Field(description="one line, the message the web app shows for the same problem")
    code: str = Field(description="a stable word for programs: no_face, possible_duplicate, unauthorized, ...")
    matches: list[dict] | None = Field(None, description="409: who the face (or photo) matches, best first")
    faces: list[dict] | None = Field(None, description="422 multiple_faces: the faces to pick a face_index from")
    taken: str | None = Field(None, description="409 name_taken: the enrolled name it clashes with")


class ThresholdPolicy(BaseModel):
    """How the threshold was set and what it means for this gallery (`facerec.openset.threshold_policy`)."""

    model_config = ConfigDict(extra="allow")
    threshold: float = Field(description="the score at or above which a face is a match (on `scale`: a cohort-"
                                         "normalised score, or a cosine for a model calibrated on cosines)")
    comparisons: int = Field(description="faces a stranger is compared with (1 for verification)")
    target_fpir: float | None = Field(description="the accepted stranger-match rate it was set for; null if pinned")
    expected_fpir: float | None = Field(description="expected stranger-match rate at this threshold")
    pinned: bool
    sentence: str = Field(description="the same, in plain words")


class Face(BaseModel):
    box: list[float] = Field(description="x1, y1, x2, y2 in pixels of the uploaded photo")
    score: float = Field(description="detector confidence in [0, 1]")
    landmarks: list[list[float]] = Field(description="eyes, nose, mouth corners: five [x, y]")


class Person(BaseModel):
    id: int
    name: str
    photos: int = Field(description="every face this person is searched by: the photos enrolled or added, and the "
                                    "faces learned from confirmed sightings (`learned` of them)")
    learned: int = Field(0, description="of `photos`, the faces learned from confirmed sightings: the photos "
                                        "alone are `photos - learned`")
    note: str | None
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, info: IdentityInfo) -> "Person":
        data = info.to_dict()
        return cls(**{key: data[key] for key in cls.model_fields})


class PeoplePage(BaseModel):
    people: list[Person]
    total: int = Field(description="people matching the search in all")
    offset: int
    limit: int


class Lookalike(BaseModel):
    name: str
    similarity: float = Field(description="the score the look-alike check compared (kept under this name for older "
                                          "readers; the same as `score`)")
    score: float | None = None


class Quality(BaseModel):
    """`facerec.faces.quality`: the calibrated chance that a later photo of this person is recognised as them first."""

    model_config = ConfigDict(extra="allow")
    score: float = Field(description="in [0, 1]")
    low: bool = Field(description="below the calibration's low_score: enrollment is refused unless allowed")
    reasons: list[str]
    face_width_px: float
    sentence: str


class Learning(BaseModel):
    learned_face_id: int | None = Field(description="the template learned from the sighting's face, if any")
    not_learned_because: str | None = Field(description="why the face was not learned (the checks of add-photo)")
    replaced_face_id: int | None = Field(description="a learned template it replaced (at most 10 are kept)")


class Undone(BaseModel):
    removed_face_ids: list[int] = Field(description="templates learned from the sighting's face, removed")
    restored_face_ids: list[int] = Field(description="templates they had replaced, searched again")


class Sighting(BaseModel):
    id: int
    name: str
    source: str = Field(description="identified, confirmed, corrected, rejected (forgotten) or \"not this person\"")
    similarity: float = Field(description="cosine to the person's best-matching enrolled face")
    learning: Learning | None = Field(None, description="what a confirmation or correction taught the gallery")
    undone: Undone | None = Field(None, description="what a rejection or correction undid of what the face taught "
                                                    "(also after the sighting was cleared or evicted)")
    negative_id: int | None = Field(None, description="the negative example \"not this person\" kept (undo: DELETE "
                                                      "/negatives/{id})")


class Template(BaseModel):
    face_id: int
    identity_id: int
    origin: str = Field(description="enrolled, added, or learned (from a confirmed sighting)")
    learned_from_sighting: int | None
    learned_by: str | None = Field(description="who confirmed the sighting it was learned from")
    added_at: str


class Suggestion(BaseModel):
    id: int = Field(description="the suggestion's id (its group of faces)")
    faces: int = Field(description="faces of this unknown person kept")
    photos: int = Field(description="different photos they were seen in")
    first_seen: str
    last_seen: str
    face_ids: list[int] = Field(description=f"its faces, the most typical first (at most {SHOWN_FACES} of them)")


class Suggestions(BaseModel):
    on: bool = Field(description="whether unknown faces are kept (FACEREC_SUGGESTIONS=on, never in privacy mode)")
    off_because: str | None = Field(description="why not, when off")
    suggestions: list[Suggestion] = Field(description="one page of the people seen at least 3 times in at least 2 "
                                                      "photos, not enrolled; the most often seen first")
    total: int = Field(description="suggestions in all (in the grouping shown)")
    offset: int
    limit: int
    grouped_at: str | None = Field(description="when the kept faces shown were grouped (grouping runs in the "
                                               "background); null before the first grouping")
    refreshing: bool = Field(description="faces were kept or forgotten since: a new grouping is under way; ask "
                                         "again in a moment for it")


class SuggestionFace(BaseModel):
    face_id: int
    jpeg_base64: str = Field(description="the aligned 112x112 face, a JPEG")


class SuggestionFaces(BaseModel):
    id: int
    faces: list[SuggestionFace]


class NameSuggestion(BaseModel):
    name: str = Field(description="the person's name (the rules of enrollment)")
    note: str | None = Field(None, max_length=2000)


class NamedSuggestion(BaseModel):
    identity_id: int
    name: str
    face_ids: list[int] = Field(description="the faces enrolled (the first the enrollment, the others added)")
    photos: int
    forgotten: int = Field(description="the suggestion's other faces, forgotten")


class Dismissed(BaseModel):
    id: int
    forgotten: int = Field(description="faces forgotten")


class Correction(BaseModel):
    person_id: int = Field(ge=1, le=2**63 - 1, description="who the face really is")


class Label(BaseModel):
    """`POST /sightings`: a face identify did not keep is this person."""
    label_token: str = Field(max_length=64_000, description="the face's `label_token` from an identify answer")
    person_id: int = Field(ge=1, le=2**63 - 1, description="who the face is")
    confirmed: bool = Field(False, description="true: the face was named this person and that was right (kept as "
                                               "a confirmed sighting); false: a correction")


class NotThisPerson(BaseModel):
    """`POST /negatives`: a face identify did not keep is not this person."""
    label_token: str = Field(max_length=64_000, description="the face's `label_token` from an identify answer")
    person_id: int = Field(ge=1, le=2**63 - 1, description="who the face is not")


class Negative(BaseModel):
    negative_id: int = Field(description="the negative example kept (undo: DELETE /negatives/{negative_id})")
    identity_id: int


class Enrolled(BaseModel):
    identity_id: int
    name: str
    face_id: int
    photos: int = Field(description="the person's faces now, learned ones included")
    learned: int = Field(0, description="of `photos`, the faces learned from confirmed sightings")
    face: Face
    lookalikes: list[Lookalike] = Field(description="other people this face resembles (allowed look-alikes)")
    threshold: float | None = Field(None, description="the look-alike check's threshold as the cosine two typical "
                                                      "faces of this gallery must reach")
    score_threshold: float | None = Field(None, description="the look-alike check's threshold on the score")
    expected_fpir: float | None = None
    threshold_policy: ThresholdPolicy | None = None
    quality: Quality | None = Field(None, description="the face's enrollment quality (null: no calibration ships)")

    @classmethod
    def of(cls, result: EnrollResult) -> "Enrolled":
        return cls(**worded(result.to_dict(), result.lookalike_threshold))


class Candidate(BaseModel):
    name: str
    identity_id: int
    similarity: float = Field(description="cosine similarity in [-1, 1] of this person's best-matching face")
    score: float | None = Field(None, description="its normalised score: what the decision compares")


class IdentifiedFace(BaseModel):
    box: list[float] = Field(description="x1, y1, x2, y2 in pixels")
    detection_score: float = Field(description="the face detector's confidence in [0, 1] that this is a face")
    name: str = Field(description="the person's name, or 'unknown' below the threshold")
    known: bool
    identity_id: int | None
    similarity: float | None = Field(description="the best candidate's similarity (null in an empty gallery)")
    threshold: float | None = Field(None, description="the cosine this face had to reach against the best candidate "
                                                      "(`similarity >= threshold` exactly when it is named)")
    score: float | None = Field(None, description="the best candidate's normalised score (cohort standard "
                                                  "deviations): what the decision compares with `score_threshold`, as "
                                                  "in every other answer (null in an empty gallery)")
    score_threshold: float | None = Field(None, description="the threshold in force on the score")
    stranger_far: float | None = Field(None, description="the share of strangers who score this high against "
                                                         "that person (per comparison, from the model card)")
    candidates: list[Candidate] = Field(description="the top_k people, best first, by score")
    sighting_id: int | None = Field(None, description="the sighting this named face was kept as (confirm or "
                                                      "correct it under /sightings); null when not kept")
    label_token: str | None = Field(None, description=LABEL_TOKEN)


class Identified(BaseModel):
    faces: list[IdentifiedFace] = Field(description="every face in the photo, left to right as detected (at most "
                                                    "the 50 largest)")
    faces_found: int = Field(description="faces the photo has; more than `faces` when only the largest were "
                                         "identified")
    note: str | None = Field(None, description="a sentence when some faces were left out")
    threshold: float = Field(description="the cosine two of this gallery's typical faces must reach (each face "
                                         "has its own exact one)")
    score_threshold: float = Field(description="the threshold in force on the normalised score")
    expected_fpir: float | None
    top_k: int
    threshold_policy: ThresholdPolicy

    @classmethod
    def of(cls, matches: FoundFaces, top_k: int, rule: ThresholdInForce, typical_cosine: float,
           tokens: list[str | None] | None = None) -> "Identified":
        """The answer; `tokens`: each face's `label_token` (an admin key's answer only)."""
        faces = []
        for i, match in enumerate(matches):
            face = match.face.to_dict()
            data = match.to_dict()
            best = match.candidates[0].identity_id if match.name is not None and match.candidates else None
            faces.append(IdentifiedFace(
                box=face["box"], detection_score=face["score"], name=match.label, known=match.name is not None,
                identity_id=best, similarity=data["similarity"], threshold=data["threshold"],
                score=data["score"], score_threshold=data["score_threshold"],
                stranger_far=data["stranger_far"],
                candidates=[Candidate(**candidate, identity_id=c.identity_id)
                            for c, candidate in zip(match.candidates, data["candidates"])],
                sighting_id=match.sighting_id, label_token=tokens[i] if tokens else None))
        policy = with_sentence(rule.to_dict(), rule)
        return cls(faces=faces, faces_found=matches.found, note=faces_left_out_message(matches.found, len(matches)),
                   threshold=round(typical_cosine, 4), score_threshold=policy["threshold"],
                   expected_fpir=policy["expected_fpir"], top_k=top_k, threshold_policy=policy)


class Verified(BaseModel):
    same_person: bool
    similarity: float
    threshold: float = Field(description="the cosine this pair had to reach")
    score: float | None = Field(None, description="the pair's normalised score: what the decision compares")
    score_threshold: float | None = Field(None, description="the threshold in force on the score")
    stranger_far: float | None = Field(None, description="the share of pairs of different people that score this "
                                                         "high")
    expected_fpir: float | None = Field(description="for one comparison: the per-comparison false-match rate")
    threshold_policy: ThresholdPolicy
    face_a: Face
    face_b: Face


class Health(BaseModel):
    """`facerec health --json`: the embedding metrics, confusable pairs and suspected duplicates."""

    model_config = ConfigDict(extra="allow")
    identities: int
    faces: int
    threshold: float
    closest_is_positive_accuracy: float | None
    median_distances: dict[str, float | None]
    readings: dict[str, str]
    confusable_pairs: list[dict]
    suspected_duplicates: list[dict]
    notes: list[str]
    threshold_policy: dict


class Merge(BaseModel):
    into_person_id: int = Field(ge=1, le=2**63 - 1, description="the person who stays; the other is merged into them")
    force: bool = Field(False, description="merge even when no face of one matches a face of the other")


class Move(BaseModel):
    person_id: int | None = Field(None, ge=1, le=2**63 - 1, description="the enrolled person the face goes to")
    new_name: str | None = Field(None, description="or: a new person, called this, made from the face")
    force: bool = Field(False, description="move even when the face does not match the person's own photos")


class Regrouped(BaseModel):
    name: str
    identity_id: int
    moved_face_ids: list[int]
    duplicate_face_ids: list[int] = Field(description="faces of the same photo in both, kept once")
    removed_person: str | None = Field(description="the person merged away")
    best_score: float | None = Field(description="the best score between the two people's faces that was checked")


class Rename(BaseModel):
    name: str = Field(description="the new name (the same name rule as enrollment)")


class Imported(BaseModel):
    added: int
    skipped: int = Field(description="faces already in the gallery (same photo and face)")


class TrackCandidate(BaseModel):
    name: str
    score: float = Field(description="its normalised score against the track's pooled views")


class Track(BaseModel):
    """One face followed across frames, decided once on its pooled views (`facerec.gallery.video.TrackMatch`)."""

    track: int = Field(description="the track's number in this answer")
    name: str = Field(description="the person's name, or 'unknown' below the threshold")
    known: bool
    score: float | None = Field(description="the pooled views' normalised score: what the decision compares with "
                                            "`score_threshold` (null in an empty gallery)")
    similarity: float | None = Field(description="the pooled embedding's cosine to the best candidate")
    first_frame: int
    last_frame: int
    first_time: float = Field(description="seconds from the start")
    last_time: float
    frames_seen: int = Field(description="frames the face was detected on")
    views: int = Field(description="views pooled (at most 12 while followed without a gap, per stretch)")
    best_frame: int
    best_quality: float = Field(description="the best view's enrollment quality score in [0, 1]")
    box: list[int] = Field(description="x1, y1, x2, y2 of the best view, in the video's own pixels")
    candidates: list[TrackCandidate] = Field(description="the top_k people, best first, by score")
    sighting_id: int | None = Field(None, description="the sighting this named track was kept as (confirm or correct "
                                                      "it under /sightings); absent when not kept")
    label_token: str | None = Field(None, description=LABEL_TOKEN)


class VideoFacts(BaseModel):
    frames: int
    fps: float
    width: int
    height: int
    seconds: float


class VideoIdentified(BaseModel):
    """`POST /videos/identify`: one answer per face followed (`facerec.gallery.video.VideoAnswer.to_dict`)."""

    model_config = ConfigDict(extra="allow")
    tracks: list[Track] = Field(description="first seen first")
    score_threshold: float = Field(description="the threshold tracks were decided at: a photo's plus `pooled_shift`")
    pooled_shift: float = Field(description="the calibrated shift for pooled evidence")
    threshold_policy: ThresholdPolicy
    video: VideoFacts
    detected_every: int = Field(description="faces were looked for on every k-th frame")
    counts: dict[str, int] = Field(description="frames decoded and detected on, faces, views embedded, faces "
                                               "aligned, tracks re-linked, faces not followed (past 1,000 tracks)")
    seconds_taken: float
    warning: str | None
    summary: str = Field(description="the answer in a sentence")
