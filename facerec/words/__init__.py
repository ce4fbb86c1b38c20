"""Every sentence a person reads, for every interface (page, REST, CLI) and for the parts that raise or return them:
how numbers, counts and sentences are written (`phrasing`), the threshold's sentence (`threshold`), what is wrong
with a model card's calibration (`card_warnings`), an enrollment photo's quality (`quality`), why a face was
refused (`refusals`), Health's readings and trend (`health`), the sightings paragraph (`sightings`), what a
confirmation taught (`templates`), people and video answers (`people`, `video`), what the operator should know
about the database server (`engines`).

The parts decide with numbers; words phrase them. Words sit low in the layers (beside `facerec.settings`) so any
part can take its sentence from here, and import nothing of facerec's but themselves: what they phrase they read
through the fields they name (`threshold.ThresholdInForce`, `quality.Quality`). `tests/test_words_owner.py` checks
that no part below the interfaces writes a number into a sentence itself."""
