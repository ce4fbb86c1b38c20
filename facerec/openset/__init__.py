"""Open-set statistics: how often a stranger would be named, and the threshold that keeps that promise.

tail (the generalised-Pareto fit of the far tail of stranger similarities), calibrate (the model card's
calibration on held-out identities), population_tail (a gallery's own
stranger tail), threshold_policy (the threshold for a gallery of a given size at an accepted stranger-match
rate). Numbers only: the interfaces phrase them.
"""
