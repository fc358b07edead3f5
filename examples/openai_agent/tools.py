"""The assistant's tools: send a mail, keep a note, look at the outbox."""

from __future__ import annotations

from typing import Any

from examples import relay


def send_mail(to: str, body: str) -> dict[str, Any]:
    """Send an e-mail through the relay; returns the relay's message id."""
    return relay.post("MAIL_RELAY_URL", "/messages", {"to": to, "body": body})


def append_note(text: str) -> dict[str, Any]:
    """Append a line to the team's notes."""
    return relay.post("NOTES_URL", "/notes", {"text": text})


def read_outbox() -> dict[str, Any]:
    """The messages the relay has accepted today."""
    return relay.get("MAIL_RELAY_URL", "/messages")
