"""Health's numbers, owned here: how well the enrolled faces separate (`report`: the spec's embedding metrics over
the gallery, sampled past a size), what the sightings memory adds (`sightings`), distances from similarities
(`distances`). Numbers only: `facerec.words.health` says them in words for every interface, and the Health tab
draws the charts (`facerec.ui.health_charts`)."""

from facerec.gallery.health.report import GalleryHealth, HealthReport, gallery_health

__all__ = ["GalleryHealth", "HealthReport", "gallery_health"]
