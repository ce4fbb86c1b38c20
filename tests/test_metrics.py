"""facerec.metrics against shared/specs/embedding_metrics.md: ClosestIsPositiveAccuracy and MedianDistances.

Hand-computed cases check each rule of the spec (worked example, lower median, ties, duplicates, NaN, cross-batch
memory, reset, input checks); a brute-force O(n^2) NumPy reference checks random data; one case checks the
sampled MedianDistance above EXACT_ALL_PAIRS_LIMIT rows.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from facerec.metrics import (
    EXACT_ALL_PAIRS_LIMIT,
    ClosestIsPositiveAccuracy,
    MedianDistances,
    lower_median,
)

SPEC_KEYS = {
    "MedianDistance",
    "MedianClosestDistance",
    "MedianClosestPositiveDistance",
    "MedianClosestVsClosestPositiveDistance",
}

WORKED_EMBEDDINGS = np.array([[0, 0], [0, 1], [3, 0], [3, 1], [10, 0]], dtype=np.float32)
WORKED_LABELS = np.array([0, 0, 1, 2, 3])


def score(embeddings, labels, memory=None):
    """(accuracy, medians dict) after one update of fresh metrics."""
    accuracy, medians = ClosestIsPositiveAccuracy(memory), MedianDistances(memory)
    accuracy.update(embeddings, labels)
    medians.update(embeddings, labels)
    return accuracy.compute(), medians.compute()


def line(*xs) -> np.ndarray:
    """1-D embeddings [B, 1] at the given positions."""
    return np.array(xs, dtype=np.float64)[:, None]


def assert_medians(result, expected: dict, tol: float = 1e-6) -> None:
    assert set(result) == SPEC_KEYS
    for key, value in expected.items():
        got = result[key]
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(got), f"{key}: expected NaN, got {got}"
        else:
            assert got == pytest.approx(value, abs=tol), f"{key}: expected {value}, got {got}"


def same_floats(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


# ---------------------------------------------------------------------------------------------------------------
# Brute-force reference (independent of facerec.metrics): full distance matrix by direct differences.


def ref_lower_median(values) -> float:
    values = sorted(values)
    return float(values[(len(values) - 1) // 2]) if values else float("nan")


def ref_score_set(embeddings: np.ndarray, labels: np.ndarray, lists: dict, counts: list) -> None:
    e = np.asarray(embeddings, dtype=np.float64)
    n = len(e)
    dist = np.sqrt(((e[:, None, :] - e[None, :, :]) ** 2).sum(axis=-1))
    lists["MedianDistance"].extend(dist[np.triu_indices(n, 1)].tolist())
    for i in range(n):
        others = np.arange(n) != i
        if not others.any():
            continue
        row = np.where(others, dist[i], np.inf)
        nearest = int(np.argmin(row))  # first minimum: lowest row index on ties
        lists["MedianClosestDistance"].append(row[nearest])
        positives = others & (labels == labels[i])
        if positives.any():
            closest_positive = np.where(positives, dist[i], np.inf).min()
            counts[0] += int(labels[nearest] == labels[i])
            counts[1] += 1
            lists["MedianClosestPositiveDistance"].append(closest_positive)
            lists["MedianClosestVsClosestPositiveDistance"].append(closest_positive - row[nearest])


class Reference:
    def __init__(self, memory: int | None = None) -> None:
        self.memory = memory
        self.lists = {key: [] for key in SPEC_KEYS}
        self.counts = [0, 0]
        self.memory_embeddings = None
        self.memory_labels = None

    def update(self, embeddings: np.ndarray, labels: np.ndarray) -> None:
        if self.memory is None:
            ref_score_set(embeddings, labels, self.lists, self.counts)
            return
        if self.memory_embeddings is None:
            self.memory_embeddings, self.memory_labels = embeddings.copy(), labels.copy()
        else:
            self.memory_embeddings = np.concatenate([self.memory_embeddings, embeddings])
            self.memory_labels = np.concatenate([self.memory_labels, labels])
        self.memory_embeddings = self.memory_embeddings[-self.memory :]
        self.memory_labels = self.memory_labels[-self.memory :]
        if len(self.memory_labels) == self.memory:
            ref_score_set(self.memory_embeddings, self.memory_labels, self.lists, self.counts)

    def accuracy(self) -> float:
        return self.counts[0] / self.counts[1] if self.counts[1] else float("nan")

    def medians(self) -> dict:
        return {key: ref_lower_median(values) for key, values in self.lists.items()}


def clustered_data(seed: int, rows: int = 300, dim: int = 16, identities: int = 40):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((identities, dim))
    labels = rng.integers(0, identities, rows)
    embeddings = (0.6 * centres[labels] + 0.5 * rng.standard_normal((rows, dim))).astype(np.float32)
    return embeddings, labels


# ---------------------------------------------------------------------------------------------------------------
# The spec's worked example and median convention


def test_worked_example_accuracy():
    accuracy, _ = score(WORKED_EMBEDDINGS, WORKED_LABELS)
    assert accuracy == 1.0


def test_worked_example_medians():
    _, medians = score(WORKED_EMBEDDINGS, WORKED_LABELS)
    assert medians["MedianDistance"] == pytest.approx(math.sqrt(10), abs=1e-6)
    assert medians["MedianClosestDistance"] == 1.0
    assert medians["MedianClosestPositiveDistance"] == 1.0
    assert medians["MedianClosestVsClosestPositiveDistance"] == 0.0
    assert not medians.estimated and medians.note == ""


def test_lower_median_helper():
    assert lower_median(np.array([1.0, 2.0, 3.0, 4.0])) == 2.0
    assert lower_median(np.array([4.0, 1.0, 3.0, 2.0])) == 2.0
    assert lower_median(np.array([5.0, 1.0, 3.0])) == 3.0
    assert lower_median(np.array([7.0])) == 7.0
    assert math.isnan(lower_median(np.array([])))


def test_even_counts_take_the_lower_middle_value_in_every_list():
    # Points 0, 1, 4, 10 with labels 0, 1, 0, 1 (worked by hand):
    #   all pairs        1, 4, 10, 3, 9, 6 -> sorted 1 3 [4] 6 9 10 -> 4   (mean of middles would be 5)
    #   closest          1, 1, 3, 6        -> 1 [1] 3 6             -> 1   (2)
    #   closest positive 4, 9, 4, 9        -> 4 [4] 9 9             -> 4   (6.5)
    #   vs               3, 8, 1, 3        -> 1 [3] 3 8             -> 3
    # and every nearest neighbour is a negative: accuracy 0/4 = 0.0 (not NaN).
    accuracy, medians = score(line(0, 1, 4, 10), np.array([0, 1, 0, 1]))
    assert accuracy == 0.0
    assert_medians(
        medians,
        {
            "MedianDistance": 4.0,
            "MedianClosestDistance": 1.0,
            "MedianClosestPositiveDistance": 4.0,
            "MedianClosestVsClosestPositiveDistance": 3.0,
        },
    )


# ---------------------------------------------------------------------------------------------------------------
# Nearest-neighbour ties, duplicates, self exclusion


@pytest.mark.parametrize("offset", [0.0, 10_000.0], ids=["near-origin", "large-offset"])
def test_tie_goes_to_lowest_row_index(offset):
    # Row 1 sits exactly between rows 0 and 2 (distance 1 to both). Rows 1 and 2 share a label.
    # Negative first: row 1's tie goes to row 0 (a negative) -> row 1 wrong, row 2 right: 1/2.
    negative_first = np.array([[1, 0], [0, 0], [-1, 0]], dtype=np.float64) + offset
    accuracy, medians = score(negative_first, np.array([7, 3, 3]))
    assert accuracy == 0.5
    assert medians["MedianClosestVsClosestPositiveDistance"] == 0.0  # tie: positive is as close as the nearest
    # Positive first: row 1's tie goes to row 0 (now its positive) -> both counted rows right: 2/2.
    positive_first = np.array([[-1, 0], [0, 0], [1, 0]], dtype=np.float64) + offset
    accuracy, _ = score(positive_first, np.array([3, 3, 7]))
    assert accuracy == 1.0


def test_near_tie_is_decided_by_exact_distance_not_float32_rounding():
    # float64 input: row 1 is 1 + 1e-9 away from row 0 (lower index, negative), row 2 exactly 1 away (positive).
    # In float32 both distances round to 1; the exact distance must still decide.
    embeddings = line(0.0, 1.0 + 1e-9, -1.0)
    accuracy, medians = score(embeddings, np.array([0, 1, 0]))
    assert accuracy == 1.0
    assert medians["MedianClosestVsClosestPositiveDistance"] == 0.0


def test_exact_duplicates_at_other_rows_count_with_distance_zero():
    # Rows 0 and 1 are identical but belong to different people; worked by hand:
    #   row 0: nearest row 1 (0, negative, wrong); nearest positive row 2 (3); vs 3
    #   row 1: nearest row 0 (0, negative, wrong); nearest positive row 3 (5); vs 5
    #   row 2: rows 0 and 1 both at 3 -> tie to row 0 (positive, right); nearest positive 3; vs 0
    #   row 3: nearest row 2 (4, negative, wrong); nearest positive row 1 (5); vs 1
    embeddings = np.array([[0, 0], [0, 0], [3, 0], [3, 4]], dtype=np.float32)
    accuracy, medians = score(embeddings, np.array([0, 1, 0, 1]))
    assert accuracy == 0.25
    assert_medians(
        medians,
        {
            "MedianDistance": 3.0,  # 0 3 [3] 4 5 5
            "MedianClosestDistance": 0.0,  # 0 [0] 3 4
            "MedianClosestPositiveDistance": 3.0,  # 3 [3] 5 5
            "MedianClosestVsClosestPositiveDistance": 1.0,  # 0 [1] 3 5
        },
        tol=0.0,
    )


def test_duplicate_of_same_label_is_a_positive_at_distance_zero():
    accuracy, medians = score(np.array([[2, 2], [2, 2], [9, 9]], dtype=np.float32), np.array([5, 5, 6]))
    assert accuracy == 1.0
    assert medians["MedianClosestPositiveDistance"] == 0.0
    assert medians["MedianClosestDistance"] == 0.0


def test_a_row_is_never_its_own_neighbour():
    # All labels distinct and all points distinct: if the row itself were a candidate every closest distance would
    # be 0 and every row would "have a positive".
    accuracy, medians = score(line(0, 2, 5), np.array([0, 1, 2]))
    assert math.isnan(accuracy)
    assert medians["MedianClosestDistance"] == 2.0  # closest = 2, 2, 3
    assert math.isnan(medians["MedianClosestPositiveDistance"])


# ---------------------------------------------------------------------------------------------------------------
# NaN: nothing scored, no positives


def test_never_updated_is_nan():
    assert math.isnan(ClosestIsPositiveAccuracy().compute())
    medians = MedianDistances().compute()
    assert set(medians) == SPEC_KEYS
    assert all(math.isnan(v) for v in medians.values())


def test_empty_update_is_nan():
    accuracy, medians = score(np.zeros((0, 4), np.float32), np.zeros(0, np.int64))
    assert math.isnan(accuracy)
    assert all(math.isnan(v) for v in medians.values())


def test_single_row_has_no_pairs_and_no_neighbour():
    accuracy, medians = score(np.array([[1.0, 2.0]]), np.array([0]))
    assert math.isnan(accuracy)
    assert all(math.isnan(v) for v in medians.values())


def test_one_photo_per_label_defines_only_the_unlabelled_medians():
    accuracy, medians = score(WORKED_EMBEDDINGS, np.array([0, 1, 2, 3, 4]))
    assert math.isnan(accuracy)
    assert medians["MedianDistance"] == pytest.approx(math.sqrt(10), abs=1e-6)
    assert medians["MedianClosestDistance"] == 1.0
    assert math.isnan(medians["MedianClosestPositiveDistance"])
    assert math.isnan(medians["MedianClosestVsClosestPositiveDistance"])


def test_without_memory_each_batch_is_scored_alone():
    # Each batch alone has no positives; together they would (0 & 1, 10 & 11).
    accuracy, medians = ClosestIsPositiveAccuracy(), MedianDistances()
    for batch in (line(0, 10), line(1, 11)):
        accuracy.update(batch, np.array([0, 1]))
        medians.update(batch, np.array([0, 1]))
    assert math.isnan(accuracy.compute())
    result = medians.compute()
    assert result["MedianDistance"] == 10.0  # pairs 10 and 10 only; never 1 (0-1 across batches)
    assert result["MedianClosestDistance"] == 10.0
    assert math.isnan(result["MedianClosestPositiveDistance"])


def test_results_accumulate_over_updates_and_compute_does_not_consume_state():
    accuracy, medians = ClosestIsPositiveAccuracy(), MedianDistances()
    accuracy.update(line(0, 1, 4, 10), np.array([0, 1, 0, 1]))  # 0/4
    first = accuracy.compute()
    assert first == 0.0 and accuracy.compute() == first
    accuracy.update(WORKED_EMBEDDINGS, WORKED_LABELS)  # 2/2
    assert accuracy.compute() == pytest.approx(2 / 6)
    medians.update(WORKED_EMBEDDINGS, WORKED_LABELS)
    assert medians.compute() == medians.compute()


# ---------------------------------------------------------------------------------------------------------------
# Cross-batch memory


def test_memory_scores_nothing_until_full_then_rescores_whole_memory():
    size = 3
    accuracy, medians = ClosestIsPositiveAccuracy(size), MedianDistances(size)

    def update(embeddings, labels):
        accuracy.update(embeddings, labels)
        medians.update(embeddings, labels)

    # 1) memory [0, 1] (2 < 3): nothing scored.
    update(line(0, 1), np.array([0, 0]))
    assert math.isnan(accuracy.compute())
    assert all(math.isnan(v) for v in medians.compute().values())

    # 2) memory [0, 1, 10] labels [0, 0, 1]: full, scored.
    #    rows 0, 1 count and are right (2/2); all 1, 10, 9; closest 1, 1, 9; positive 1, 1; vs 0, 0.
    update(line(10), np.array([1]))
    assert accuracy.compute() == 1.0
    assert_medians(
        medians.compute(),
        {
            "MedianDistance": 9.0,
            "MedianClosestDistance": 1.0,
            "MedianClosestPositiveDistance": 1.0,
            "MedianClosestVsClosestPositiveDistance": 0.0,
        },
    )

    # 3) memory [1, 10, 11] labels [0, 1, 0]: the oldest entry (0) is dropped, the whole memory rescored.
    #    row "1": nearest 10 (negative, wrong), positive 11 at 10, vs 1; row "10": no positive;
    #    row "11": nearest 10 (wrong), positive 1 at 10, vs 9.   -> 2 right of 4 = 0.5
    #    (scoring only the new row would give 2/3; keeping 0 instead would give a different memory)
    #    lists: all 1 10 9 | 9 10 1; closest 1 1 9 | 9 1 1; positive 1 1 | 10 10; vs 0 0 | 1 9
    update(line(11), np.array([0]))
    assert accuracy.compute() == 0.5
    assert_medians(
        medians.compute(),
        {
            "MedianDistance": 9.0,  # 1 1 [9] 9 10 10
            "MedianClosestDistance": 1.0,
            "MedianClosestPositiveDistance": 1.0,  # 1 [1] 10 10
            "MedianClosestVsClosestPositiveDistance": 0.0,  # 0 [0] 1 9
        },
    )

    # 4) memory [10, 11, 12] labels [1, 0, 1]: pair (10, 11) is counted a second time, as the spec intends.
    #    row "10": nearest 11 (wrong), positive 12 at 2, vs 1; row "11": no positive;
    #    row "12": nearest 11 (wrong), positive 10 at 2, vs 1.   -> 2 right of 6
    #    lists add: all 1 2 1; closest 1 1 1; positive 2 2; vs 1 1
    update(line(12), np.array([1]))
    assert accuracy.compute() == pytest.approx(2 / 6)
    assert_medians(
        medians.compute(),
        {
            "MedianDistance": 2.0,  # 1 1 1 1 [2] 9 9 10 10
            "MedianClosestDistance": 1.0,
            "MedianClosestPositiveDistance": 2.0,  # 1 1 [2] 2 10 10
            "MedianClosestVsClosestPositiveDistance": 1.0,  # 0 0 [1] 1 1 9
        },
    )


def test_memory_rescoring_counts_the_same_rows_again():
    # Memory of 2, label 0 for every row: every full update scores both rows again.
    accuracy = ClosestIsPositiveAccuracy(2)
    accuracy.update(line(0, 1), np.array([0, 0]))
    assert (accuracy.correct, accuracy.total) == (2, 2)
    accuracy.update(line(3), np.array([0]))
    assert (accuracy.correct, accuracy.total) == (4, 4)
    accuracy.update(line(4), np.array([1]))  # memory [3, 4], labels [0, 1]: no positives, nothing added
    assert (accuracy.correct, accuracy.total) == (4, 4)


def test_first_batch_larger_than_memory_keeps_only_the_newest_rows():
    # Memory of 3 receives 5 rows: [0, 100, 1, 2, 50] -> keeps [1, 2, 50]; all pairs 1, 49, 48 -> median 48.
    accuracy, medians = score(line(0, 100, 1, 2, 50), np.array([0, 0, 1, 1, 2]), memory=3)
    assert accuracy == 1.0  # rows 1 and 2 (label 1) count, each other's nearest
    assert medians["MedianDistance"] == 48.0
    assert medians["MedianClosestDistance"] == 1.0  # 1 1 48


def test_reset_empties_the_memory_too():
    for metric in (ClosestIsPositiveAccuracy(3), MedianDistances(3)):
        metric.update(line(0, 1), np.array([0, 0]))
        metric.reset()
        metric.update(line(10), np.array([0]))  # memory holds 1 row after the reset: not full, nothing scored
        value = metric.compute()
        values = [value] if isinstance(value, float) else list(value.values())
        assert all(math.isnan(v) for v in values)
        metric.update(line(11, 12), np.array([0, 0]))  # now [10, 11, 12]: full
        value = metric.compute()
        values = [value] if isinstance(value, float) else [value["MedianDistance"]]
        assert values == [1.0]


def test_reset_without_memory_forgets_scores():
    accuracy, medians = ClosestIsPositiveAccuracy(), MedianDistances()
    accuracy.update(WORKED_EMBEDDINGS, WORKED_LABELS)
    medians.update(WORKED_EMBEDDINGS, WORKED_LABELS)
    accuracy.reset()
    medians.reset()
    assert math.isnan(accuracy.compute())
    assert all(math.isnan(v) for v in medians.compute().values())


def test_memory_rejects_a_change_of_embedding_width():
    metric = MedianDistances(10)
    metric.update(np.zeros((2, 4), np.float32), np.array([0, 1]))
    with pytest.raises(ValueError):
        metric.update(np.zeros((2, 5), np.float32), np.array([0, 1]))


@pytest.mark.parametrize("size", [0, -3, 2.5, True, "3"])
def test_memory_size_must_be_a_positive_integer(size):
    with pytest.raises(ValueError):
        ClosestIsPositiveAccuracy(size)
    with pytest.raises(ValueError):
        MedianDistances(size)


def test_memory_size_given_as_integral_float_behaves_like_the_integer():
    metric = ClosestIsPositiveAccuracy(3.0)
    metric.update(line(0, 1, 5), np.array([0, 0, 1]))
    assert metric.compute() == 1.0


def test_memory_is_not_affected_by_later_changes_to_the_callers_buffer():
    buffer = np.array([[0.0], [1.0]])
    metric = MedianDistances(3)
    metric.update(buffer, np.array([0, 0]))
    buffer[:] = 100.0  # the caller reuses its buffer for the next batch
    metric.update(line(5), np.array([1]))
    # memory must be [0, 1, 5]: pairs 1, 5, 4 -> median 4
    assert metric.compute()["MedianDistance"] == 4.0


# ---------------------------------------------------------------------------------------------------------------
# Torch tensors (torch is optional for facerec.metrics, but installed here)


def test_torch_float32_tensor_gives_the_same_floats_as_numpy():
    torch = pytest.importorskip("torch")
    embeddings, labels = clustered_data(seed=11, rows=120)
    expected_accuracy, expected = score(embeddings, labels)
    accuracy, medians = score(torch.tensor(embeddings), torch.tensor(labels))
    assert accuracy == expected_accuracy and type(accuracy) is float
    assert all(same_floats(medians[k], expected[k]) for k in SPEC_KEYS)
    assert all(type(v) is float for v in medians.values())


def test_torch_tensor_requiring_grad_is_accepted():
    torch = pytest.importorskip("torch")
    embeddings = torch.tensor(WORKED_EMBEDDINGS, requires_grad=True) * 1.0
    accuracy, medians = score(embeddings, torch.tensor(WORKED_LABELS))
    assert accuracy == 1.0
    assert medians["MedianDistance"] == pytest.approx(math.sqrt(10), abs=1e-6)


def test_torch_bfloat16_tensor_matches_numpy_of_the_same_values():
    torch = pytest.importorskip("torch")
    # Worked example: its integer coordinates are exact in bfloat16, so the exact spec values come back.
    accuracy, medians = score(torch.tensor(WORKED_EMBEDDINGS.tolist(), dtype=torch.bfloat16),
                              torch.tensor(WORKED_LABELS.tolist()))
    assert accuracy == 1.0
    assert medians["MedianDistance"] == pytest.approx(math.sqrt(10), abs=1e-6)
    assert medians["MedianClosestDistance"] == 1.0

    # Random values: bfloat16 tensor vs the float32 NumPy array of the very same (rounded) values.
    embeddings, labels = clustered_data(seed=12, rows=120)
    tensor = torch.tensor(embeddings, dtype=torch.bfloat16)
    as_numpy = tensor.float().numpy()
    assert not np.array_equal(as_numpy, embeddings)  # bfloat16 really rounded them
    expected_accuracy, expected = score(as_numpy, labels)
    accuracy, medians = score(tensor, torch.tensor(labels))
    assert accuracy == expected_accuracy
    assert all(same_floats(medians[k], expected[k]) for k in SPEC_KEYS)


def test_torch_float_labels_are_rejected():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError):
        ClosestIsPositiveAccuracy().update(torch.zeros(3, 2), torch.tensor([0.0, 1.0, 1.0]))


def test_metrics_module_does_not_import_torch():
    code = "import sys, facerec.metrics; assert 'torch' not in sys.modules, 'facerec.metrics imported torch'"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr


# ---------------------------------------------------------------------------------------------------------------
# Input checks and return types


@pytest.mark.parametrize(
    "embeddings, labels",
    [
        (np.zeros(4, np.float32), np.arange(4)),  # embeddings 1-D
        (np.zeros((4, 2, 2), np.float32), np.arange(4)),  # embeddings 3-D
        (np.zeros((4, 2), np.float32), np.arange(4)[:, None]),  # labels 2-D
        (np.zeros((4, 2), np.float32), np.arange(3)),  # B mismatch
        (np.array([[0.0, 1.0], [np.nan, 0.0]]), np.array([0, 1])),  # NaN
        (np.array([[0.0, 1.0], [np.inf, 0.0]]), np.array([0, 1])),  # +inf
        (np.array([[0.0, -np.inf], [1.0, 0.0]]), np.array([0, 1])),  # -inf
        (np.zeros((2, 2), np.float32), np.array([0.0, 1.0])),  # float labels
        (np.array([["a", "b"], ["c", "d"]]), np.array([0, 1])),  # not numbers
    ],
    ids=["emb-1d", "emb-3d", "labels-2d", "batch-mismatch", "nan", "inf", "neg-inf", "float-labels", "strings"],
)
def test_bad_input_raises_value_error(embeddings, labels):
    for metric in (ClosestIsPositiveAccuracy(), MedianDistances(), ClosestIsPositiveAccuracy(4)):
        with pytest.raises(ValueError):
            metric.update(embeddings, labels)


def test_rejected_update_leaves_state_untouched():
    metric = ClosestIsPositiveAccuracy()
    metric.update(WORKED_EMBEDDINGS, WORKED_LABELS)
    with pytest.raises(ValueError):
        metric.update(np.array([[np.nan, 0.0], [0.0, 0.0]]), np.array([0, 0]))
    assert metric.compute() == 1.0


def test_compute_returns_python_float_and_dict_with_exactly_the_spec_keys():
    accuracy, medians = score(WORKED_EMBEDDINGS, WORKED_LABELS)
    assert type(accuracy) is float
    assert isinstance(medians, dict)
    assert set(medians.keys()) == SPEC_KEYS and len(medians) == 4
    assert all(type(v) is float for v in medians.values())


def test_integer_and_float64_embeddings_are_accepted():
    accuracy, medians = score(WORKED_EMBEDDINGS.astype(np.int32), WORKED_LABELS.astype(np.int32))
    assert accuracy == 1.0
    assert medians["MedianDistance"] == pytest.approx(math.sqrt(10), abs=1e-6)


# ---------------------------------------------------------------------------------------------------------------
# Agreement with the brute-force reference on random data


def assert_matches_reference(accuracy, medians, reference: Reference) -> None:
    assert accuracy == reference.accuracy()
    expected = reference.medians()
    for key in SPEC_KEYS:
        assert medians[key] == pytest.approx(expected[key], abs=1e-4), key
    assert medians["MedianClosestVsClosestPositiveDistance"] >= 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_data_matches_brute_force_reference(seed):
    embeddings, labels = clustered_data(seed)
    accuracy, medians, reference = ClosestIsPositiveAccuracy(), MedianDistances(), Reference()
    for batch in (slice(0, 300), slice(0, 100), slice(100, 300)):  # one big set plus two smaller ones
        accuracy.update(embeddings[batch], labels[batch])
        medians.update(embeddings[batch], labels[batch])
        reference.update(embeddings[batch], labels[batch])
    assert 0.0 < reference.accuracy() < 1.0  # a meaningful case, not all right or all wrong
    assert_matches_reference(accuracy.compute(), medians.compute(), reference)


@pytest.mark.parametrize("seed", [3, 4])
def test_random_data_with_memory_matches_brute_force_reference(seed):
    embeddings, labels = clustered_data(seed)
    size = 100
    accuracy, medians, reference = ClosestIsPositiveAccuracy(size), MedianDistances(size), Reference(size)
    for start in range(0, 300, 32):
        batch = slice(start, start + 32)
        accuracy.update(embeddings[batch], labels[batch])
        medians.update(embeddings[batch], labels[batch])
        reference.update(embeddings[batch], labels[batch])
    assert reference.counts[1] > 0 and 0.0 < reference.accuracy() < 1.0
    assert_matches_reference(accuracy.compute(), medians.compute(), reference)


def test_unit_norm_512d_embeddings_match_reference():
    # The shape the app really uses: L2-normalised 512-D float32 embeddings, with some exact duplicates.
    rng = np.random.default_rng(5)
    embeddings = rng.standard_normal((150, 512)).astype(np.float32)
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    embeddings[140:] = embeddings[:10]
    labels = rng.integers(0, 30, 150)
    accuracy, medians = score(embeddings, labels)
    reference = Reference()
    reference.update(embeddings, labels)
    assert_matches_reference(accuracy, medians, reference)
    assert medians["MedianClosestDistance"] == pytest.approx(reference.medians()["MedianClosestDistance"], abs=1e-6)


# ---------------------------------------------------------------------------------------------------------------
# Above EXACT_ALL_PAIRS_LIMIT rows MedianDistance comes from a sample of pairs, and says so.


def test_median_distance_is_estimated_above_the_exact_limit():
    rows = EXACT_ALL_PAIRS_LIMIT + 1
    rng = np.random.default_rng(21)
    embeddings = rng.standard_normal((rows, 8)).astype(np.float32)
    medians = MedianDistances()
    medians.update(embeddings, np.arange(rows))  # distinct labels: only the unlabelled medians are defined
    result = medians.compute()
    assert result.estimated is True
    assert isinstance(result.note, str) and result.note.strip()
    assert set(result) == SPEC_KEYS
    assert math.isnan(result["MedianClosestPositiveDistance"])

    # An independent exact median over a different random sample of 200,000 distinct pairs.
    check = np.random.default_rng(99)
    first = check.integers(0, rows, 200_000)
    second = (first + check.integers(1, rows, 200_000)) % rows
    sample = np.sqrt(((embeddings[first].astype(np.float64) - embeddings[second]) ** 2).sum(axis=1))
    assert result["MedianDistance"] == pytest.approx(ref_lower_median(sample.tolist()), rel=0.01)
    assert 0.0 < result["MedianClosestDistance"] < result["MedianDistance"]


def test_identical_embeddings_have_exactly_zero_distance_in_every_list():
    rng = np.random.default_rng(3)
    base = rng.normal(scale=300.0, size=(6, 512))  # large raw values: cancellation would show here
    embeddings = np.concatenate([base, base[:3]])
    labels = np.array([0, 1, 2, 3, 4, 5, 0, 1, 2])
    medians = MedianDistances()
    medians.update(embeddings, labels)
    result = medians.compute()
    assert result["MedianClosestPositiveDistance"] == 0.0
    from facerec.metrics import all_pair_distances

    distances, estimated = all_pair_distances(embeddings)
    assert not estimated and np.sum(distances == 0.0) == 3


def test_huge_but_finite_embeddings_still_find_their_neighbours():
    embeddings = np.array([[0.0, 0.0], [0.0, 1.0], [1e20, 0.0], [1e20, 1.0]])
    labels = np.array([0, 0, 1, 1])
    accuracy = ClosestIsPositiveAccuracy()
    accuracy.update(embeddings, labels)
    assert accuracy.compute() == 1.0
