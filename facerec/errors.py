"""One exception family for everything a user can get wrong.

The UI and the CLI catch `FaceRecError` and show its message as a single line; anything else is a bug.
"""


class FaceRecError(Exception):
    """Base of every error facerec reports to a user in plain words."""


class InvalidImage(FaceRecError):
    """The input is not a usable image: not an image at all, truncated, empty, too large or unsupported."""


class ImageTooLarge(InvalidImage):
    """The image has more pixels than the limit, or too many to decode safely (the REST API answers 413)."""


class InvalidVideo(InvalidImage):
    """The input is not a usable video: not a container and codec FFmpeg (PyAV) reads, empty, or unreadable midway."""


class VideoTooLarge(InvalidVideo, ImageTooLarge):
    """The video is longer, bigger or has more frames than a request may (`facerec.video.decode.VideoLimits`)."""


class NoFace(FaceRecError):
    """No face was detected in the photo."""


class MultipleFaces(FaceRecError):
    """Several faces were found where exactly one was needed; `faces` lists them so a caller can choose, `photo`
    says which photo ('the photo', 'the first photo')."""

    def __init__(self, message: str, faces: list | None = None, photo: str = "the photo") -> None:
        super().__init__(message)
        self.faces = faces or []
        self.photo = photo


class UnknownIdentity(FaceRecError):
    """The named or numbered identity is not in the gallery."""


class UnknownSighting(UnknownIdentity):
    """No such sighting (`facerec.gallery.sightings`): never kept, or dropped from the bounded memory."""


class UnknownSuggestion(UnknownIdentity):
    """No such suggested person (`facerec.gallery.suggestions`): named, dismissed, forgotten, or never one."""


class UnknownLibraryGroup(UnknownIdentity):
    """No such group in a grouped library run (`facerec.library.groups_file`)."""


class DuplicatePhoto(FaceRecError):
    """This exact photo (same bytes) is already enrolled; `enrolled_as` names the person it is enrolled as."""

    def __init__(self, message: str, enrolled_as: str | None = None) -> None:
        super().__init__(message)
        self.enrolled_as = enrolled_as


class PossibleDuplicate(FaceRecError):
    """The new face matches another identity above the threshold; `matches` holds (name, score) pairs."""

    def __init__(self, message: str, matches: list[tuple[str, float]] | None = None) -> None:
        super().__init__(message)
        self.matches = matches or []


class LowQuality(FaceRecError):
    """The face to enroll is unlikely to be recognised later (`facerec.faces.quality`); `quality` says why. Enrolling
    it anyway is the caller's choice (`allow_low_quality`)."""

    heading = "Warning"  # how the web page labels it: nothing is wrong with the photo as a file

    def __init__(self, message: str, quality=None) -> None:
        super().__init__(message)
        self.quality = quality


class IdentityMismatch(FaceRecError):
    """A photo added to a person does not match them (or matches someone else better); `matches` holds
    (name, similarity) pairs of the people it does match."""

    def __init__(self, message: str, matches: list[tuple[str, float]] | None = None) -> None:
        super().__init__(message)
        self.matches = matches or []


class ModelMismatch(FaceRecError):
    """The gallery's embeddings were made by a different model than the one loaded."""


class InvalidArgument(FaceRecError):
    """A parameter given by the user is out of range or malformed."""


class NameTaken(InvalidArgument):
    """The name, or one differing from it only in letter case, belongs to an enrolled person; `taken` is theirs."""

    def __init__(self, message: str, taken: str | None = None) -> None:
        super().__init__(message)
        self.taken = taken


class UnusableFile(FaceRecError):
    """A file facerec needs (the gallery database, its index, the model card) is missing, unreadable or does not
    belong with the others. Raised before anything is written, so the folder is left exactly as it was."""


class StorageFull(FaceRecError):
    """The gallery's disk (or the database server's) is full: the write was rolled back, nothing was saved."""


class Busy(FaceRecError):
    """The server already has as much of this kind of work as it takes (videos waiting): try again later."""


class AccessDenied(FaceRecError):
    """The admin password is missing or wrong, or too many wrong passwords came from this client."""


class LockedOut(AccessDenied):
    """Too many wrong admin passwords came from this client (or from everywhere): no password is checked for a
    while, the right one included. What needs no password is still answered."""
