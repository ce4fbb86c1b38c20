"""What an admin tells the gallery about its identifications: sightings confirmed, corrected, rejected, "not this
person", and faces that were not kept, labelled by their token."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi import Path as PathParam

import facerec.api.schemas as schemas
from facerec.access.api_keys import ApiKey
from facerec.api.auth import ADMIN
from facerec.api.routes.common import (
    MAX_ID, ApiContext, Learn, SightingId, concern_router, error_responses, learned_by
)


def router(context: ApiContext) -> APIRouter:
    services = context.gallery.services()  # what the verbs do not offer
    router = concern_router()

    @router.post("/sightings/{sighting_id}/confirm", response_model=schemas.Sighting, tags=["sightings"],
                 summary="The identification kept as this sighting was right (its face learned as a template)",
                 responses=error_responses(400, 404))
    async def confirm_sighting(sighting_id: SightingId, key: Annotated[ApiKey, ADMIN], learn: Learn = True):
        learn_by = learned_by(key) if learn else None
        return (await context.run(services.feedback.confirm, sighting_id, learn_by)).to_dict()

    @router.post("/sightings/{sighting_id}/correct", response_model=schemas.Sighting, tags=["sightings"],
                 summary="The face kept as this sighting is another enrolled person (learned as theirs)",
                 responses=error_responses(400, 404))
    async def correct_sighting(sighting_id: SightingId, correction: schemas.Correction,
                               key: Annotated[ApiKey, ADMIN], learn: Learn = True):
        return (await context.run(services.feedback.correct, sighting_id, correction.person_id,
                                  learned_by(key) if learn else None)).to_dict()

    @router.post("/sightings", status_code=201, response_model=schemas.Sighting, tags=["sightings"],
                 summary="A face identify did not keep is this person: kept as a sighting (learned as theirs)",
                 responses=error_responses(400, 404))
    async def label_face(label: schemas.Label, key: Annotated[ApiKey, ADMIN], learn: Learn = True):
        """The face is the one whose `label_token` an identify answer gave (to an admin key, within the hour);
        as the page's Correct (or Confirm, with `confirmed`) on a face that was not kept."""
        return (await context.run(services.feedback.label_token, label.label_token, label.person_id,
                                  label.confirmed, learned_by(key) if learn else None)).to_dict()

    @router.delete("/sightings/{sighting_id}", response_model=schemas.Sighting, dependencies=[ADMIN],
                   tags=["sightings"], summary="The face kept as this sighting is nobody enrolled: forget it",
                   responses=error_responses(400, 404))
    async def reject_sighting(sighting_id: SightingId):
        return (await context.run(services.feedback.reject, sighting_id)).to_dict()

    @router.post("/sightings/{sighting_id}/not-this-person", response_model=schemas.Sighting, tags=["sightings"],
                 summary="The face kept as this sighting is not the person it was named as: kept as their negative "
                         "example, so faces more like it than like them are not named them",
                 responses=error_responses(400, 404))
    async def not_this_person(sighting_id: SightingId, key: Annotated[ApiKey, ADMIN]):
        return (await context.run(services.feedback.not_this_person, sighting_id, learned_by(key))).to_dict()

    @router.post("/negatives", status_code=201, response_model=schemas.Negative, tags=["sightings"],
                 summary="A face identify did not keep is not this person: kept as their negative example",
                 responses=error_responses(400, 404))
    async def not_this_face(denial: schemas.NotThisPerson, key: Annotated[ApiKey, ADMIN]):
        negative = await context.run(services.feedback.not_this_token, denial.label_token, denial.person_id,
                                     learned_by(key))
        return {"negative_id": negative, "identity_id": denial.person_id}

    @router.delete("/negatives/{negative_id}", dependencies=[ADMIN], tags=["sightings"],
                   summary="Undo one \"not this person\"", responses=error_responses(404))
    async def remove_negative(negative_id: Annotated[int, PathParam(ge=1, le=MAX_ID)]):
        return {"removed": negative_id, "identity_id": await context.run(services.negatives.remove, negative_id)}


    return router
