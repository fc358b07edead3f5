"""Ready-made agent configurations used by the demonstrations and the docs."""
