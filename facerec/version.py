"""facerec's version, one place (pyproject.toml repeats it for the packager): the REST API and the CLI show it."""

__version__ = "0.1.0"
