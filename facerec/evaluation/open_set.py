"""Open-set identification at the threshold policy: FPIR and DIR at several gallery sizes, with intervals.

Every person of the one-shot protocol (a two-photo evaluation person, or a one-photo distractor) has one enrolled
photo; their other photos are queries. For a gallery of n people:
- **mated searches**: the queries of the people in the gallery; identified (DIR) when the top candidate is the
  right person at or above the threshold in force;
- **non-mated searches**: every photo (enrolled or query) of the people NOT in the gallery; a false match
  (FPIR) when any gallery face reaches the threshold.
The threshold is the one the policy gives a gallery of that many faces (`facerec.openset.threshold_policy`), exactly
what identify would use: with the drawn gallery's own stranger tail (`facerec.openset.population_tail`, measured on its
enrolled faces alone, as the app does) where it has the people for one; each row also gives the figures at the
model card's threshold alone (`card_only`), to show what the gallery's own tail changes. For the full gallery
the non-mated searches are cross-fitted: the people are split in two halves and each half's photos are searched
at the threshold of the tail fitted on the other half, so no figure is scored by a tail that saw its own probes
(before, 4,848 of the 5,627 non-mated searches were photos whose pairs the tail had been fitted on).
Galleries smaller than the dataset are random draws of n people (several draws, so that there are ~1,000 mated
searches); the full gallery takes each person out in turn for their non-mated
searches (leave-one-out: a stranger meets the other n - 1 people). Searches are exact (all scores computed).
Intervals: 95% percentile bootstrap over the people whose photos are searched (a person's photos, across
draws, rise and fall together).
"""

from __future__ import annotations

import math

import numpy as np

from facerec.openset.stranger_tail import empirical_threshold
from facerec.openset.cohort import RawCosine, Scorer, normalised
from facerec.openset.population_tail import measure_population_tail
from facerec.openset.threshold_policy import ThresholdPolicy

MATED_SEARCHES_WANTED = 1000
MAX_DRAWS = 200
BOOTSTRAP = 1000
INTERVAL = 0.95
# An FPIR of r is measured (not merely bounded) only when r times the non-mated searches is at least this many
# false matches: below it, "DIR at FPIR 1%" from 12 searches is really DIR at "no false match at all".
FALSE_MATCHES_NEEDED = 10


def too_few_searches(searches: int, fpir: float) -> str | None:
    """A warning when `searches` non-mated searches cannot measure an FPIR of `fpir` (None when they can)."""
    needed = math.ceil(FALSE_MATCHES_NEEDED / fpir)
    if searches >= needed:
        return None
    return (f"only {searches:,} non-mated searches: an FPIR of {100 * fpir:g}% needs at least {needed:,} "
            f"({FALSE_MATCHES_NEEDED} expected false matches) to be measured, so this figure is not at {100 * fpir:g}%")


def parse_sizes(text: str, people: int) -> list[int]:
    """'100,1000,all' -> [100, 1000, people] (sizes at or above the number of people become the full gallery)."""
    sizes = set()
    for item in str(text).split(","):
        item = item.strip().lower()
        if item:
            sizes.add(people if item == "all" else min(people, int(item)))
    return sorted(s for s in sizes if s >= 1)


def evaluate_open_set(gallery_vectors: np.ndarray, query_vectors: np.ndarray, query_owner: np.ndarray,
                      policy: ThresholdPolicy, sizes: list[int], seed: int = 51, scorer: Scorer | None = None) -> dict:
    """Open-set figures. `gallery_vectors` [P, D]: person i's enrolled face; `query_vectors` [Q, D] with
    `query_owner` [Q]: the person (row of gallery_vectors) each query shows. Scores are those `scorer` gives
    (the gallery's: cohort-normalised for a card calibrated on them), exactly as identify decides."""
    scorer = scorer or RawCosine()
    people = len(gallery_vectors)
    probes = np.concatenate([gallery_vectors, query_vectors]).astype(np.float32)
    owner = np.concatenate([np.arange(people), np.asarray(query_owner, np.int64)])
    is_query = np.arange(len(probes)) >= people
    gallery_statistics = scorer.statistics(gallery_vectors)
    cosines = probes @ gallery_vectors.astype(np.float32).T  # [P + Q, P]
    scores = normalised(cosines, scorer.statistics(probes), gallery_statistics)

    def tail_of(members: np.ndarray):
        return measure_population_tail(gallery_vectors[members], members, statistics=gallery_statistics[members],
                                       ceiling=policy.calibration.ceiling)

    rng = np.random.default_rng(seed)
    people_with_queries = len(np.unique(query_owner))
    results = []
    for size in sizes:
        if size >= people:
            results.append(_full_gallery(scores, owner, is_query, policy, tail_of, seed))
            continue
        per_draw = size * people_with_queries / people
        draws = int(min(MAX_DRAWS, max(1, math.ceil(MATED_SEARCHES_WANTED / max(per_draw, 1e-9)))))
        card_rule = policy.for_gallery(size, size)
        own, card = _Decisions(people), _Decisions(people)
        for _ in range(draws):
            members = np.sort(rng.choice(people, size, replace=False))
            tail = tail_of(members)
            rule = policy.for_gallery(size, size, population=tail) if tail is not None else card_rule
            inside = np.isin(owner, members)
            sub = scores[:, members]
            best = sub.argmax(axis=1)
            top = sub[np.arange(len(sub)), best]
            searched = inside & is_query
            named = members[best[searched]] == owner[searched]
            for decisions, used in ((own, rule), (card, card_rule)):
                decisions.add(used, owner[searched], named & (top[searched] >= used.threshold),
                              owner[~inside], top[~inside] >= used.threshold)
        results.append({**own.row(size, draws, rng), "card_only": card.row(size, draws, rng)})
    full = results[-1] if results and results[-1]["gallery_people"] == people else None
    target = None if policy.pinned_threshold is not None else policy.fpir
    for row in results:
        row["held_out_people"] = people - row["gallery_people"] if row is not full else 1
        warning = too_few_searches(row["non_mated_searches"], target) if target else None
        if warning:
            row["warning"] = warning
    summary = {
        "protocol": "mated: queries of gallery people; non-mated: all photos of people outside the gallery "
                    "(random draws of n people; leave-one-out for the full gallery); exact search; threshold from "
                    "the policy for n enrolled faces with the drawn gallery's own stranger tail (card_only: the "
                    "model card's alone); 95% bootstrap intervals over searched people",
        "fpir_target": target,
        "pinned_threshold": policy.pinned_threshold,
        "calibration_warning": policy.calibration.warning,
        "sizes": results,
    }
    if full is not None:
        summary.update(_oracle(scores, owner, is_query))
        summary["score"] = scorer.scale
        # the same oracle on raw cosines, beside: what the normalisation buys, in one run
        summary["raw_cosine"] = _oracle(cosines.astype(np.float64), owner, is_query)
    return summary


class _Decisions:
    """The mated and non-mated outcomes of one way of setting the threshold, over a size's draws."""

    def __init__(self, people: int) -> None:
        self.mated, self.non_mated = Outcomes(people), Outcomes(people)
        self.rules = []

    def add(self, rule, mated_owners, identified, non_mated_owners, falsely_matched) -> None:
        self.rules.append(rule)
        self.mated.add(mated_owners, identified)
        self.non_mated.add(non_mated_owners, falsely_matched)

    def row(self, size: int, draws: int, rng) -> dict:
        """The size's figures; threshold and expected FPIR are the means over the draws' rules."""
        expected = [r.expected_fpir for r in self.rules]
        intervals = [r.expected_fpir_interval for r in self.rules]
        row = {"gallery_people": size, "gallery_faces": size, "draws": draws,
               "threshold": round(float(np.mean([r.threshold for r in self.rules])), 4),
               "expected_fpir": None if None in expected else float(np.mean(expected)),
               "expected_fpir_interval": None if None in intervals else np.mean(intervals, axis=0).tolist(),
               "non_mated_searches": self.non_mated.total, "fpir": self.non_mated.rate(),
               "fpir_interval": self.non_mated.interval(rng), "mated_searches": self.mated.total,
               "dir": self.mated.rate(), "dir_interval": self.mated.interval(rng)}
        raised = sum(r.raised_from is not None for r in self.rules)
        if raised:
            row["threshold_range"] = [round(min(r.threshold for r in self.rules), 4),
                                      round(max(r.threshold for r in self.rules), 4)]
            row["raised_by_own_tail"] = f"{raised} of {draws} draws"
        return row


SMALL_COUNT = 10  # fewer positives (or negatives) than this: the exact binomial interval


def exact_binomial_interval(positives: int, searches: int, level: float = 0.95) -> list[float]:
    """The Clopper-Pearson interval of a rate `positives` / `searches`: the rates p whose binomial tails at the
    observed count are each at least (1 - level) / 2 (found by bisection on the binomial CDF)."""
    tail = (1 - level) / 2

    def at_most(count: int, rate: float) -> float:  # P(X <= count), X ~ Binomial(searches, rate)
        if rate <= 0:
            return 1.0
        if rate >= 1:
            return 1.0 if count >= searches else 0.0
        terms = [math.lgamma(searches + 1) - math.lgamma(k + 1) - math.lgamma(searches - k + 1)
                 + k * math.log(rate) + (searches - k) * math.log1p(-rate) for k in range(count + 1)]
        top = max(terms)
        return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))

    def solve(condition) -> float:  # the rate in [0, 1] where `condition` turns from True to False
        low, high = 0.0, 1.0
        for _ in range(60):
            middle = (low + high) / 2
            low, high = (middle, high) if condition(middle) else (low, middle)
        return (low + high) / 2

    if positives > searches - positives:  # sum the short side: P(X <= k) over few terms
        low, high = exact_binomial_interval(searches - positives, searches, level)
        return [1 - high, 1 - low]
    upper = 1.0 if positives == searches else solve(lambda rate: at_most(positives, rate) > tail)
    lower = 0.0 if positives == 0 else solve(lambda rate: at_most(positives - 1, rate) > 1 - tail)
    return [lower, upper]


class Outcomes:
    """Per-person counts of searches and of positive outcomes (identified, or falsely matched), with the rate's
    95% bootstrap interval over the people searched (a person's searches rise and fall together)."""

    def __init__(self, people: int) -> None:
        self.searches = np.zeros(people, np.int64)
        self.positives = np.zeros(people, np.int64)

    def add(self, owners: np.ndarray, positive: np.ndarray) -> None:
        np.add.at(self.searches, owners, 1)
        np.add.at(self.positives, owners, positive.astype(np.int64))

    @property
    def total(self) -> int:
        return int(self.searches.sum())

    def rate(self) -> float:
        return float(self.positives.sum() / self.searches.sum()) if self.total else float("nan")

    def interval(self, rng: np.random.Generator) -> list[float] | None:
        """The bootstrap interval; where positives or negatives are few (< SMALL_COUNT), the exact binomial
        (Clopper-Pearson) interval instead: 0 false matches in 40 searches is no proof of 0% (it allows ~9%), and a
        bootstrap of zeros has zero width."""
        active = np.flatnonzero(self.searches)
        if not len(active):
            return None
        positives, searches = int(self.positives.sum()), int(self.searches.sum())
        if min(positives, searches - positives) < SMALL_COUNT:
            return exact_binomial_interval(positives, searches)
        weights = np.stack([np.bincount(rng.integers(0, len(active), len(active)), minlength=len(active))
                            for _ in range(BOOTSTRAP)])
        rates = (weights @ self.positives[active]) / np.maximum(weights @ self.searches[active], 1)
        low, high = np.percentile(rates, [100 * (1 - INTERVAL) / 2, 100 * (1 + INTERVAL) / 2])
        return [float(low), float(high)]


def _full_gallery(scores: np.ndarray, owner: np.ndarray, is_query: np.ndarray, policy: ThresholdPolicy,
                  tail_of, seed: int = 51) -> dict:
    """The whole gallery. Mated searches use the threshold identify would (the tail of all n people); each person's
    non-mated searches meet the other n - 1 people at a threshold whose gallery tail was fitted on people disjoint
    from the searched one: the people are split in two halves, and a half's photos are searched at the threshold
    of the other half's tail (cross-fitting), so no stranger is scored by a tail fitted on its own pairs."""
    people = scores.shape[1]
    tail = tail_of(np.arange(people))
    halves = np.random.default_rng(seed).permutation(people) % 2  # person -> half
    half_tails = [tail_of(np.flatnonzero(halves == h)) for h in (0, 1)]
    best = scores.argmax(axis=1)
    top = scores[np.arange(len(scores)), best]
    best_other = _best_other(scores, owner)
    rows = []
    for own_tail in (True, False):
        rule = policy.for_gallery(people, people, population=tail if own_tail else None)
        # A searched person of half h meets the other n - 1 people, at the threshold of the other half's tail.
        stranger_rules = [policy.for_gallery(people - 1, people - 1,
                                             population=half_tails[1 - h] if own_tail else None) for h in (0, 1)]
        stranger_threshold = np.array([stranger_rules[h].threshold for h in (0, 1)])[halves[owner]]
        decisions = _Decisions(people)
        decisions.add(rule, owner[is_query], (best[is_query] == owner[is_query]) & (top[is_query] >= rule.threshold),
                      owner, best_other >= stranger_threshold)
        row = decisions.row(people, 1, np.random.default_rng(0))
        row["non_mated_gallery"] = ("leave-one-out: each person's photos against the other n - 1 people, at the "
                                    "threshold of the gallery tail fitted on the other half of the people")
        row["non_mated_gallery_people"] = people - 1
        row["non_mated_thresholds"] = [round(r.threshold, 4) for r in stranger_rules]
        rows.append(row)
    return {**rows[0], "card_only": rows[1]}


def _best_other(scores: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Each probe's best score against the gallery without its own person."""
    masked = scores.copy()
    masked[np.arange(len(scores)), owner] = -np.inf
    return masked.max(axis=1)


def _oracle(scores: np.ndarray, owner: np.ndarray, is_query: np.ndarray) -> dict:
    """DIR at FPIR 1% / 10% with the threshold chosen on the full gallery's own non-mated scores (a measure of
    the embedding, not of the policy: no deployed system can pick its threshold this way)."""
    non_mated = _best_other(scores, owner)
    best = scores.argmax(axis=1)
    top = scores[np.arange(len(scores)), best]
    result = {}
    for fpir in (0.01, 0.1):
        threshold = empirical_threshold(non_mated, fpir)
        hits = (best[is_query] == owner[is_query]) & (top[is_query] >= threshold)
        result[f"dir_at_fpir_{fpir:g}"] = {"threshold": round(threshold, 4), "dir": float(np.mean(hits)),
                                           "fpir": float(np.mean(non_mated >= threshold)),
                                           "non_mated_searches": int(len(non_mated))}
        warning = too_few_searches(len(non_mated), fpir)
        if warning:
            result[f"dir_at_fpir_{fpir:g}"]["warning"] = warning
    return result


def percent(value: float | None, interval: list | None = None) -> str:
    """A rate as a table cell: "0.62% (0.43–0.83%)"; "–" when there is none."""
    text = "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.2f}%"
    if interval:
        text += f" ({100 * interval[0]:.2f}–{100 * interval[1]:.2f}%)"
    return text


def markdown_table(open_set: dict) -> str:
    """One row per gallery size: threshold, expected and measured FPIR with intervals, DIR."""
    lines = ["| gallery people | threshold | expected FPIR | measured FPIR (95% interval) | non-mated searches | "
             "DIR (95% interval) | mated searches | card's threshold alone: threshold, FPIR, DIR |",
             "|---|---|---|---|---|---|---|---|"]
    for row in open_set["sizes"]:
        card = row.get("card_only")
        card_text = (f"{card['threshold']:.4f}, {percent(card['fpir'])}, {percent(card['dir'])}" if card else "–")
        lines.append(f"| {row['gallery_people']:,} | {row['threshold']:.4f} | {percent(row['expected_fpir'])} | "
                     f"{percent(row['fpir'], row['fpir_interval'])} | {row['non_mated_searches']:,} | "
                     f"{percent(row['dir'], row['dir_interval'])} | {row['mated_searches']:,} | {card_text} |")
    lines += [f"\nWarning ({row['gallery_people']:,} people): {row['warning']}." for row in open_set["sizes"]
              if row.get("warning")]
    return "\n".join(lines)


def warnings(open_set: dict) -> list[str]:
    """Every warning of the open-set figures, one line each (printed by `facerec eval`, written to the report)."""
    found = [f"open set, {row['gallery_people']:,} people: {row['warning']}" for row in open_set.get("sizes", [])
             if row.get("warning")]
    for key, label in (("dir_at_fpir_0.01", "DIR at FPIR 1%"), ("dir_at_fpir_0.1", "DIR at FPIR 10%")):
        if open_set.get(key, {}).get("warning"):
            found.append(f"{label} (threshold chosen on the results): {open_set[key]['warning']}")
    return found
