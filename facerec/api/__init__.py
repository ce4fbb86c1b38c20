"""facerec's REST API (`/api/v1`): JSON over HTTP, OpenAPI-documented, with API keys; see `service.build_api`."""

from facerec.api.service import API_PREFIX, api_mount, build_api

__all__ = ["API_PREFIX", "api_mount", "build_api"]
