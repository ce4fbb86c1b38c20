"""Identify a video: one answer per face followed, uploads admitted by the waiting room."""

from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import anyio
from fastapi import APIRouter, Request

import facerec.api.schemas as schemas
from facerec.access.api_keys import ApiKey
from facerec.api.auth import READ
from facerec.api.errors import ApiError
from facerec.api.routes.common import ApiContext, Fpir, Threshold, TopK, Video, concern_router, error_responses
from facerec.api.uploads import save_upload, upload_label
from facerec.words.threshold import worded
from facerec.words.video import video_summary


def router(context: ApiContext) -> APIRouter:
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    router = concern_router()

    @router.post("/videos/identify", dependencies=[READ], tags=["search"], responses=error_responses(400, 413),
                 response_model=schemas.VideoIdentified, response_model_exclude_unset=True,
                 summary="Name every face of a video, followed across its frames: one answer per track")
    async def identify_video(request: Request, video: Video, key: Annotated[ApiKey, READ], top_k: TopK = 3,
                             fpir: Fpir = None, threshold: Threshold = None):
        """Each track (a face followed across frames): name or 'unknown', its pooled score, when it was on screen,
        frames seen and its best face's box; a named track is one sighting (`sighting_id`). The upload is written
        to a private temporary folder (the decoder reads a file) and deleted before the answer is sent. One video
        is followed at a time and two more may wait (their uploads are read while they wait); a fourth is refused
        with 503 `busy` before its upload is read. A video whose client went away while it waited is not
        followed. For an admin key, each track not kept as a sighting has a `label_token` to label it later."""
        folder = Path(tempfile.mkdtemp(prefix="api-video-", dir=context.scratch))
        try:
            path = folder / "upload"
            await save_upload(video, path, services.settings.video_max_bytes, "the video")
            async with context.videos:
                if await request.is_disconnected():
                    raise ApiError(499, "the client went away before its video's turn", "client_closed")
                answer = await anyio.to_thread.run_sync(functools.partial(
                    gallery.identify_video, path, top_k=top_k, fpir=fpir, threshold=threshold,
                    label=upload_label(video) or "the video"))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        data = answer.to_dict()
        if key.role == "admin":  # a track not kept can be labelled later, as on the page
            for track, row in zip(answer.tracks, data["tracks"]):
                if track.match.sighting_id is None:
                    row["label_token"] = services.feedback.token(track.track.pooled, track.track.best_face,
                                                                 track.track.best_crop)
        return {**worded(data, answer.rule), "summary": video_summary(data)}


    return router
