"""The faces path's entry point where outside tools have always imported it (`from facerec.pipeline import
FacePipeline`: ../shared/tools/cpu_agreement.py, which the project cannot edit). It lives in `facerec.faces.pipeline`."""

from facerec.faces.pipeline import FacePipeline, Photo

__all__ = ["FacePipeline", "Photo"]
