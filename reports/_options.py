"""Defaults the ``compare`` and ``gate`` argument parsers show, kept free of polars and
numpy so that building the ``harness`` command line imports neither."""

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
FORMATS = ("md", "html", "json")
