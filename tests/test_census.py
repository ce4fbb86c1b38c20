"""The people and photo counts the threshold policy needs were read on every identify: at a million faces on
PostgreSQL two counts cost 70 ms, four times the search (benchmarks/pgvector_million.py, first run), and a GROUP BY
ran after every write. They are read again only when the journal moves, and in the background on a large gallery."""

from __future__ import annotations

import numpy as np

from facerec.gallery import Gallery
from facerec.gallery.census import BACKGROUND_FROM, GalleryCensus
from facerec.gallery.composition import parts_of
from facerec.settings import Settings


def test_the_census_follows_the_journal_now_on_a_small_gallery_and_in_the_background_on_a_large_one(tmp_path):
    vectors = np.random.default_rng(4).standard_normal((6, 512)).astype(np.float32)
    with Gallery(Settings.from_env(home=tmp_path / "home", store_crops=False)) as gallery:
        parts = parts_of(gallery)
        enroll = parts.enrollment.add_embeddings
        enroll([{"name": "a", "embedding": vectors[0]}, {"name": "a", "embedding": vectors[1]},
                {"name": "b", "embedding": vectors[2]}])
        census = GalleryCensus(parts.store)
        first = census.at(parts.index.seq, faces=3)
        assert first.people == 2 and first.photo_counts.photos.tolist() == [1, 2]
        assert first.photo_counts.people.tolist() == [1, 1]  # one person with one photo, one with two
        assert census.at(parts.index.seq, faces=3) is first  # the journal has not moved: nothing read

        enroll([{"name": "c", "embedding": vectors[3]}])
        assert census.at(parts.index.seq, faces=4).people == 3  # a small gallery reads the current census

        enroll([{"name": "d", "embedding": vectors[4]}])
        stale = census.at(parts.index.seq, faces=BACKGROUND_FROM)  # large: the last census answers meanwhile
        assert stale.people == 3
        census._refreshing.join(timeout=60)
        fresh = census.at(parts.index.seq, faces=BACKGROUND_FROM)
        assert fresh.people == 4 and fresh.seq == parts.index.seq

        rule = parts.thresholds.synced(with_people=True)  # what identify asks: the census, no count of its own
        assert rule.to_dict()["people"] == 4
