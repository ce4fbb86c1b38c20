"""The JSON of the photo library's routes (`/library`, #66): how the app's library run stands, its groups of people
not enrolled, a group's faces, and what naming, adding or dismissing one did."""

from __future__ import annotations

from pydantic import BaseModel, Field


class LibraryGroup(BaseModel):
    group: int = Field(description="the group's number (kept from run to run)")
    faces: int
    photos: int = Field(description="different files its faces are in")
    closest_enrolled: list | None = Field(description="the enrolled person its faces are most often nearest to, and "
                                                      "the best cosine of one of them to that person: a hint, when "
                                                      "a group may be their missed photos (add it to them)")


class Library(BaseModel):
    on: bool = Field(description="whether the app groups a library (FACEREC_LIBRARY set, not in privacy mode)")
    off_because: str | None
    running: bool = Field(description="a run is under way (one at a time)")
    files: int | None = Field(description="photos and videos the last run found in the library")
    answered: int = Field(description="files answered so far (a run resumed counts those answered before)")
    started_at: float | None = Field(description="when the last run started (Unix time)")
    finished_at: float | None = Field(description="when it ended; null while it runs")
    problem: str | None = Field(description="the last run's one-line problem, if it stopped on one")
    groups: list[LibraryGroup] = Field(description="one page of the groups shown (not named, dismissed or "
                                                   "resembling an enrolled person; faces in 2 photos or more), "
                                                   "the largest first")
    total: int = Field(description="groups shown in all")
    offset: int
    limit: int


class LibraryFace(BaseModel):
    photo: str = Field(description="the file, under the library's folder")
    box: list[int] = Field(description="the face's box in that file: left, top, right, bottom (pixels)")
    jpeg_base64: str | None = Field(description="a small picture of the face cut from its photo (null: a video's "
                                                "face, or a file gone or changed since)")


class LibraryFaces(BaseModel):
    group: int
    faces: list[LibraryFace] = Field(description="its most typical faces first")


class NameLibraryGroup(BaseModel):
    name: str = Field(description="name: the new person's name (the rules of enrollment); add: an enrolled person's")


class TakenFace(BaseModel):
    photo: str
    outcome: str = Field(description="enrolled, added, or refused: and why (each face is checked as any "
                                     "enrollment is)")


class TakenLibraryGroup(BaseModel):
    group: int
    name: str
    faces: list[TakenFace]


class DismissedLibraryGroup(BaseModel):
    group: int
    status: str
