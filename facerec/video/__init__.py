"""Video: a recording or a camera's frames to faces followed across frames, one pooled embedding per face.

decode (a file to frames with PyAV, bounded; one line for what it cannot read) -> follow (detect every k-th frame, match
detections to tracks with `tracker`, embed a track when it starts and when a better view arrives) -> tracks (a track
and its quality-weighted pool of views) -> annotate (the tracks drawn back on the video, VP9 WebM). Nothing here
knows about galleries, people or thresholds: `facerec.gallery.video` searches each track's pool once and decides
it with the threshold for pooled evidence (`facerec.openset.pooled`).
"""
