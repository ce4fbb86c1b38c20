"""Each enrolled face's cohort statistics (`facerec.openset.cohort`), kept current with the model's cohort.

Every face written gets them from the store (`FacesTable.statistics_of`). A gallery made before them, or with
another cohort (a recalibrated model), gets them when it is opened: the setting COHORT_SETTING records which
cohort (file digest and K) the stored statistics come from, and a change recomputes every face, in short
batches of writes, with no re-enrollment and no journal entry (the embeddings, which the index follows, are the
same).
"""

from __future__ import annotations

from facerec.openset.cohort import Scorer
from facerec.storage import Store

COHORT_SETTING = "cohort_id"


def bring_statistics_up_to_date(store: Store, scorer: Scorer) -> int:
    """Compute what is missing (everything, when the cohort changed); returns how many faces were computed."""
    changed = store.get_setting(COHORT_SETTING) != scorer.cohort_id
    filled = store.faces.fill_statistics(store.writing, everyone=changed)
    if changed:
        store.set_setting(COHORT_SETTING, scorer.cohort_id)
    return filled
