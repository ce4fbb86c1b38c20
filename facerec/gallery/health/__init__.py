"""Health, owned here: how well the enrolled faces separate (`report`: the spec's embedding metrics over the
gallery, sampled past a size), what the sightings memory adds (`sightings`), and each figure's plain-words reading
(`readings`). Numbers and readings only: the Health tab draws the charts (`facerec.ui.health_charts`)."""

from facerec.gallery.health.report import GalleryHealth, HealthReport, gallery_health

__all__ = ["GalleryHealth", "HealthReport", "gallery_health"]
