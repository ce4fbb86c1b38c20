"""The people: enroll, list, rename, merge, move a face, delete, their templates and added photos."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form
from fastapi import Path as PathParam
from fastapi import Query

import facerec.api.schemas as schemas
from facerec.api.auth import ADMIN, READ
from facerec.api.errors import ApiError
from facerec.api.routes.common import (
    MAX_ID, MAX_PAGE, ApiContext, FaceId, FaceIndex, PersonId, Photo, concern_router, error_responses
)
from facerec.errors import UnusableFile


def router(context: ApiContext) -> APIRouter:
    gallery = context.gallery
    services = gallery.services()  # what the verbs do not offer
    router = concern_router()

    @router.post("/people", status_code=201, response_model=schemas.Enrolled, dependencies=[ADMIN], tags=["people"],
                 summary="Enroll a new person from one photo", responses=error_responses(400, 409, 413))
    async def enroll(photo: Photo, name: Annotated[str, Form(description="the person's name")],
                     face_index: FaceIndex = None,
                     allow_lookalike: Annotated[bool, Form(description="enroll even if the face matches someone "
                                                                       "already enrolled")] = False,
                     note: Annotated[str | None, Form()] = None,
                     allow_low_quality: Annotated[bool, Form(description="enroll even if the face is a poor "
                                                                         "enrollment photo")] = False):
        """Refused with 409 when the name is taken, the photo is already enrolled, or the face matches another
        person at the threshold identify uses (a duplicate or look-alike; `matches` says who), unless
        `allow_lookalike`; with 422 `low_quality` when the face is unlikely to be recognised later (`quality`
        says why), unless `allow_low_quality`. The answer carries the face's quality."""
        decoded = await context.photo(photo)
        result = await context.run(gallery.enroll, decoded, name, face_index=face_index,
                                   allow_lookalike=allow_lookalike, note=note or None,
                                   allow_low_quality=allow_low_quality)
        return schemas.Enrolled.of(result)

    @router.post("/quality", response_model=schemas.Quality, dependencies=[ADMIN], tags=["people"],
                 summary="How likely a photo's face is to be recognised later, if enrolled",
                 responses=error_responses(400, 413, 500))
    async def quality(photo: Photo, face_index: FaceIndex = None):
        decoded = await context.photo(photo)
        found = await context.run(services.photos.enrollment_quality, decoded, face_index)
        if found is None:
            raise UnusableFile("no enrollment-quality calibration ships next to this model")
        return found.to_dict()

    @router.get("/people", response_model=schemas.PeoplePage, dependencies=[READ], tags=["people"],
                summary="List or search enrolled people, a page at a time")
    async def list_people(search: Annotated[str | None, Query(description="part of the name, any letter case")] = None,
                          offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
                          limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50):
        people, total = await context.run(services.directory.page, search or None, offset, limit)
        return schemas.PeoplePage(people=[schemas.Person.of(p) for p in people], total=total, offset=offset,
                                  limit=limit)

    @router.get("/people/{person_id}", response_model=schemas.Person, dependencies=[READ], tags=["people"],
                summary="One person, with their photo count", responses=error_responses(404))
    async def get_person(person_id: PersonId):
        return schemas.Person.of(await context.run(services.directory.get, person_id))

    @router.patch("/people/{person_id}", response_model=schemas.Person, dependencies=[ADMIN], tags=["people"],
                  summary="Rename a person", responses=error_responses(400, 404, 409))
    async def rename(person_id: PersonId, change: schemas.Rename):
        return schemas.Person.of(await context.run(gallery.rename, person_id, change.name))

    @router.post("/people/{person_id}/merge", response_model=schemas.Regrouped, dependencies=[ADMIN],
                 tags=["people"], summary="This person and another are one: every face and record of this one "
                                          "becomes theirs, and this one is gone", responses=error_responses(400, 404))
    async def merge(person_id: PersonId, merge: schemas.Merge):
        return (await context.run(gallery.merge, person_id, merge.into_person_id, merge.force)).to_dict()

    @router.post("/faces/{face_id}/move", response_model=schemas.Regrouped, dependencies=[ADMIN], tags=["people"],
                 summary="Move one face to another enrolled person, or to a new one",
                 responses=error_responses(400, 404, 409))
    async def move_face(face_id: Annotated[int, PathParam(ge=1, le=MAX_ID)], move: schemas.Move):
        return (await context.run(gallery.move_face, face_id, move.person_id, move.new_name, move.force)).to_dict()

    @router.delete("/people/{person_id}", response_model=schemas.Person, dependencies=[ADMIN], tags=["people"],
                   summary="Delete a person and every photo of them", responses=error_responses(404))
    async def delete(person_id: PersonId):
        info = await context.run(gallery.delete, person_id)
        if context.after_delete is not None:
            await context.run(context.after_delete)
        return schemas.Person.of(info)

    @router.get("/people/{person_id}/templates", response_model=list[schemas.Template], dependencies=[ADMIN],
                tags=["people"], summary="The faces a person is searched by, and where each came from",
                responses=error_responses(404))
    async def list_templates(person_id: PersonId):
        return [t.to_dict() for t in await context.run(services.templates.of, person_id)]

    @router.delete("/people/{person_id}/templates/{face_id}", response_model=schemas.Template,
                   dependencies=[ADMIN], tags=["people"], responses=error_responses(400, 404),
                   summary="Remove one of a person's faces (a learned template, say; never their last)")
    async def remove_template(person_id: PersonId, face_id: FaceId):
        if face_id not in [t.face_id for t in await context.run(services.templates.of, person_id)]:
            raise ApiError(404, f"person {person_id} has no face {face_id}")
        return (await context.run(services.templates.remove, face_id)).to_dict()

    @router.post("/people/{person_id}/photos", status_code=201, response_model=schemas.Enrolled,
                 dependencies=[ADMIN], tags=["people"], summary="Add another photo of a person",
                 responses=error_responses(400, 404, 409, 413, 422))
    async def add_photo(person_id: PersonId, photo: Photo, face_index: FaceIndex = None,
                        allow_mismatch: Annotated[bool, Form(description="add it even if the face does not match "
                                                                         "this person")] = False,
                        allow_low_quality: Annotated[bool, Form(description="add it even if the face is a poor "
                                                                            "photo to recognise them by")] = False):
        """Refused with 409 when the face does not match this person, or matches someone else better; with 422
        `low_quality` when the face is unlikely to be recognised later, unless `allow_low_quality`."""
        decoded = await context.photo(photo)
        result = await context.run(gallery.add_photo, person_id, decoded, face_index=face_index,
                                   allow_mismatch=allow_mismatch, allow_low_quality=allow_low_quality)
        return schemas.Enrolled.of(result)


    return router
