"""Search: which enrolled people a face is (identify, 1:N), and whether two photos show one person (verify, 1:1)."""

from __future__ import annotations

import numpy as np

from facerec.gallery.core import Core
from facerec.errors import InvalidArgument, ModelMismatch, NoFace
from facerec.faces.detect import DetectedFace, FoundFaces
from facerec.faces.image import ImageInput
from facerec.faces.pipeline import Photo
from facerec.faces.choice import chosen_face, decoded_faces
from facerec.gallery.reindex import model_warning
from facerec.gallery.results import Candidate, FaceMatch, VerifyResult
from facerec.gallery.sightings import SightingsMemory
from facerec.gallery.strangers import StrangersMemory
from facerec.words.phrasing import no_face_message
from facerec.openset.cohort import CohortStatistics, cosine_for_score, normalised
from facerec.openset.threshold_policy import ScoreCalibration, ThresholdInForce


# Raw nearest faces the index returns per query, re-ranked by the normalised score: the normalised best lies
# deeper than the raw top few for some faces (hubs pushed down, a quiet face's match pulled up). Measured in
# benchmarks/rerank_depth.py: how often the normalised best is outside the raw top k, at 4,848 and 100,000 faces.
RERANK_DEPTH = 50


class Search:
    """Identify and verify over one gallery: the photo pipeline, the store (names, cohort statistics), the vector
    index (faces), the scorer (`facerec.openset.cohort`: the score every decision compares), the threshold in
    force, the sightings memory that confident answers are kept in, and the strangers memory that unknown faces
    are kept in when the operator opted in."""

    def __init__(self, core: Core, *, memory: SightingsMemory, strangers: StrangersMemory) -> None:
        self._pipeline, self._store, self._index = core.pipeline, core.store, core.index
        self._thresholds = core.thresholds
        self._memory, self._strangers, self._model_id = memory, strangers, core.model_id
        self._min_face_size, self._scorer, self._policy = core.settings.min_face_size, core.scorer, core.policy
        self._model_checked_at: int | None = None  # the journal position the model check last ran at
        # Names reached through a learned face need the person's own photos to corroborate them (`_corroborated`);
        # benchmarks/claims.py turns it off for its control arm, nothing else does.
        self.corroborate_learned = True

    @property
    def calibration(self) -> ScoreCalibration:
        return self._policy.calibration

    def identify(self, photo: ImageInput | Photo, top_k: int = 5, threshold: float | None = None,
                 fpir: float | None = None, remember: bool = True, not_below_default: bool = False) -> FoundFaces:
        """Every face in the photo -> best identity (or unknown below the threshold) and top-k candidates.

        The threshold is the one in force for this gallery (`threshold_in_force`); `fpir` (an accepted
        stranger-match rate) or `threshold` (a pinned score) overrides the settings for this call. Each named
        face is kept in the sightings memory (`sightings`; `sighting_id` in its match) unless `remember` is
        False, privacy mode is on or the memory is off; each unknown face likewise in the strangers memory, only when
        suggestions are on (`facerec.gallery.strangers`). `not_below_default`: for a caller without the admin
        password, a rate or pin that would loosen the threshold in force falls back to it.

        How: one journal sync, one model check only when the journal has moved, one threshold rule (two only when
        a caller asks for another rate or pin, and the default is needed beside it)."""
        if top_k < 1:
            raise InvalidArgument("top_k must be at least 1")
        photo, faces = decoded_faces(self._pipeline, photo)
        if not faces:
            raise NoFace(no_face_message(photo.shape, self._min_face_size, too_small=getattr(faces, "too_small", None)))
        crops, embeddings = self._pipeline.embed(photo, faces)
        self._sync()
        statistics = self._scorer.statistics(embeddings)  # once per face
        ranked = self._ranked(embeddings, top_k, statistics)
        default = self._thresholds.is_default(fpir, threshold)
        rule = self._thresholds.synced(*((None, None) if default else (fpir, threshold)), with_people=True)
        trusted = rule if default else None
        if not default and (not_below_default or remember):
            trusted = self._thresholds.synced(with_people=True)
            if not_below_default and rule.threshold < trusted.threshold:
                rule = trusted  # a caller without the password never loosens the rule in force
        matches = [self._match(face, candidates, rule, embedding, statistics[i]) for i, (face, candidates, embedding)
                   in enumerate(zip(faces, ranked, embeddings))]
        for match, crop in zip(matches, crops):
            match.crop = crop  # what a label of a face not kept keeps of it (`SightingsFeedback.token`)
        if remember:  # kept only at the default rate's threshold: a caller's pin or rate never reaches the memory
            self._memory.record(matches, embeddings, trusted.threshold, crops)
            self._strangers.keep(photo.sha256, matches, embeddings, trusted.threshold, crops)
        return FoundFaces(matches, found=faces.found)  # how many faces the photo had, beyond the largest kept

    def decide(self, faces: list[DetectedFace], embeddings: np.ndarray, rule: ThresholdInForce,
               top_k: int = 5) -> list[FaceMatch]:
        """Faces already embedded (a video's tracks, by their pooled embeddings [N, D]) searched and decided at
        `rule`, as identify decides a photo's faces; nothing is kept (the caller keeps what it decided)."""
        self._sync()
        statistics = self._scorer.statistics(embeddings)
        ranked = self._ranked(embeddings, top_k, statistics)
        return [self._match(face, candidates, rule, embedding, statistics[i])
                for i, (face, candidates, embedding) in enumerate(zip(faces, ranked, embeddings))]

    def search(self, embeddings: np.ndarray, top_k: int = 5) -> list[list[Candidate]]:
        """Top-k identities (best face per identity, by the score every decision uses) for each query embedding
        [Q, 512]."""
        self._sync()
        return self._ranked(embeddings, top_k, self._scorer.statistics(embeddings))

    def scores_against(self, embedding: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """The decision scores [N] of one face against faces `vectors` [N, D] that are not in the index yet (a
        check inside a write sees faces committed since its search)."""
        vectors = np.asarray(vectors, np.float32).reshape(-1, len(embedding))
        return normalised(vectors @ embedding, self._scorer.statistics(embedding[None]),
                          self._scorer.statistics(vectors))

    def _sync(self) -> None:
        """Bring the index to the journal's head, and refuse to search another model's embeddings. The model
        check is a query, so it runs at open and again only when the journal has moved (a reindex, an import or
        another replica's write moves it)."""
        self._index.sync(self._store)
        if self._model_checked_at != self._index.seq:
            warning = model_warning(self._store, self._model_id)
            if warning:
                raise ModelMismatch(warning)
            self._model_checked_at = self._index.seq

    def _ranked(self, embeddings: np.ndarray, top_k: int, statistics: CohortStatistics) -> list[list[Candidate]]:
        """The index's raw nearest faces (RERANK_DEPTH, or 4 per wanted person), scored against each query by the
        normalised score with the faces' stored cohort statistics, best face per person, best person first."""
        similarities, face_ids = self._index.search(embeddings, max(top_k * 4, RERANK_DEPTH))
        labels = self._store.faces.scored_labels(sorted({int(f) for f in face_ids.ravel() if f >= 0}))
        negatives = self._store.negatives.of_people(sorted({label[0] for label in labels.values()}), self._model_id)
        results = []
        for query, (sims, ids) in enumerate(zip(similarities, face_ids)):
            kept = [(float(sim), labels[int(f)]) for sim, f in zip(sims, ids) if f >= 0 and int(f) in labels]
            if not kept:
                results.append([])
                continue
            cosines = np.array([sim for sim, _ in kept])
            theirs = CohortStatistics(np.array([label[2] for _, label in kept]),
                                      np.array([label[3] for _, label in kept]))
            scores = normalised(cosines, statistics[query], theirs)
            best: dict[int, Candidate] = {}
            through_learned: set[int] = set()
            for (sim, (identity_id, name, mean, sd, learned)), score in zip(kept, scores):
                if identity_id not in best or score > best[identity_id].score:
                    best[identity_id] = Candidate(name, identity_id, sim, float(score), (mean, sd))
                    through_learned.discard(identity_id)
                    if learned:
                        through_learned.add(identity_id)
            for identity_id in through_learned if self.corroborate_learned else ():
                best[identity_id] = self._corroborated(embeddings[query], best[identity_id])
            for identity_id in [i for i in best if i in negatives]:
                if self._refused_by_negatives(embeddings[query], statistics[query], best[identity_id],
                                              negatives[identity_id]):
                    del best[identity_id]
            results.append(sorted(best.values(), key=lambda c: -c.score)[:top_k])
        return results

    @staticmethod
    def _refused_by_negatives(embedding: np.ndarray, statistics: CohortStatistics, candidate: Candidate,
                              negatives: tuple[np.ndarray, np.ndarray, np.ndarray]) -> bool:
        """Whether the face looks at least as much like one of the person's negative examples ("not this
        person", `facerec.gallery.negatives`) as like the person's best face: then it is not a candidate for
        them at all."""
        vectors, means, sds = negatives
        scores = normalised(vectors @ embedding, statistics, CohortStatistics(means, sds))
        return bool(np.max(scores) >= candidate.score)

    def _corroborated(self, embedding: np.ndarray, candidate: Candidate) -> Candidate:
        """A person reached through a learned template keeps that score only when one of the photos they were
        enrolled or added from matches the face at the corroboration level (one comparison at a tenth of the
        accepted rate, `GalleryThresholds.for_corroboration`): learned
        faces extend how a person looks, they cannot carry the person. Otherwise the person is scored by their own
        photos alone, so a chain of confirmed blends towards a stranger never names the stranger (#62)."""
        _ids, own = self._store.faces.of_origin(candidate.identity_id, ("enrolled", "added"))
        if not len(own):
            return candidate
        scores = self.scores_against(embedding, own)
        at = int(np.argmax(scores))
        if scores[at] >= self._thresholds.for_corroboration().threshold:
            return candidate
        own_statistics = self._scorer.statistics(own[at][None])
        return Candidate(candidate.name, candidate.identity_id, float(own[at] @ embedding), float(scores[at]),
                         (float(own_statistics.mean[0]), float(own_statistics.sd[0])))

    def _match(self, face: DetectedFace, candidates: list[Candidate], rule: ThresholdInForce, embedding: np.ndarray,
               statistics: CohortStatistics) -> FaceMatch:
        """Named when the best candidate's score reaches the threshold in force; the cosine the pair had to reach
        and the share of strangers who would score as high go with it."""
        best = candidates[0] if candidates else None
        theirs = statistics if best is None else CohortStatistics(np.array([best.statistics[0]]),
                                                                  np.array([best.statistics[1]]))
        cosine_threshold = cosine_for_score(rule.threshold, statistics, theirs)
        far = None if best is None else self.calibration.far(best.score)
        named = best is not None and best.score >= rule.threshold
        return FaceMatch(face, best.name if named else None, None if best is None else best.similarity, candidates,
                         cosine_threshold, rule, embedding, score=None if best is None else best.score,
                         score_threshold=rule.threshold, stranger_far=far,
                         own_threshold=cosine_for_score(rule.threshold, statistics, statistics))

    def verify(self, photo_a: ImageInput | Photo, photo_b: ImageInput | Photo, threshold: float | None = None,
               fpir: float | None = None, face_a: int | None = None, face_b: int | None = None) -> VerifyResult:
        """Same person or not: compares one face of each photo, at the threshold the policy gives one comparison
        (`verification_threshold`; `fpir` or a pinned `threshold` override it for this call).

        A photo with several faces needs `face_a` / `face_b` (its face's index, left to right from 0, as `detect`
        lists them); MultipleFaces otherwise, never a silent guess. NoFace when a photo has none."""
        rule = self._thresholds.for_verification(fpir=fpir, threshold=threshold)
        embeddings, faces = [], []
        for label, source, index in (("the first photo", photo_a, face_a), ("the second photo", photo_b, face_b)):
            photo, detected = decoded_faces(self._pipeline, source)
            face = chosen_face(photo, detected, index, label, self._min_face_size)
            embeddings.append(self._pipeline.embed(photo, [face])[1][0])
            faces.append(face)
        similarity = float(np.dot(embeddings[0], embeddings[1]))
        a, b = self._scorer.statistics(embeddings[0][None]), self._scorer.statistics(embeddings[1][None])
        score = float(normalised(similarity, a, b)[0])
        return VerifyResult(score >= rule.threshold, similarity, cosine_for_score(rule.threshold, a, b), faces[0],
                            faces[1], rule, score=score, score_threshold=rule.threshold,
                            stranger_far=self.calibration.far(score))
