"""Mail assistants on the mainstream agent frameworks, each written as its docs show."""
