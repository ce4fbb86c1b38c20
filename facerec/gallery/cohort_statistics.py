"""Each enrolled face's cohort statistics (`facerec.openset.cohort`), kept current with the model's cohort.

Every face written gets them from the store (`FacesTable.statistics_of`). A gallery made before them, or with
another cohort (a recalibrated model), gets them when it is opened: the setting COHORT_SETTING records which
cohort (file digest and K) the stored statistics come from, and a change (or no setting: a gallery from before
them) recomputes every face, in short batches of writes, with no re-enrollment and no journal entry (the
embeddings, which the index follows, are the same). An open that finds the setting current reads nothing more:
no scan of the faces on every open. A face a replica of an older facerec writes afterwards, without them, gets
them computed where they are read (`FacesTable._completed`).
"""

from __future__ import annotations

from facerec.openset.cohort import Scorer
from facerec.storage import Store

COHORT_SETTING = "cohort_id"


def bring_statistics_up_to_date(store: Store, scorer: Scorer) -> int:
    """Recompute every face's statistics when the stored ones are not this cohort's; returns how many faces were
    computed (0 when they are current)."""
    if store.get_setting(COHORT_SETTING) == scorer.cohort_id:
        return 0
    filled = store.faces.fill_statistics(store.transaction)
    store.set_setting(COHORT_SETTING, scorer.cohort_id)
    return filled
