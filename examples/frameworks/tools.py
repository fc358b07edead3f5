"""The assistants' tools, shared by every framework example: plain module-level functions.

Each framework wraps them its own way (a decorator, a tool class, a JSON schema) in its
agent module; the functions themselves call the company's relay (``examples/relay.py``),
which refuses to run outside production. A scenario's ``target:`` names these functions.
"""

from __future__ import annotations

from typing import Any

from examples import relay


def send_mail(to: str, subject: str, body: str) -> dict[str, Any]:
    """Send an e-mail through the company's relay.

    Args:
        to: The recipient's address.
        subject: The subject line.
        body: The text of the mail.
    """
    return relay.post("MAIL_RELAY_URL", "/messages", {"to": to, "subject": subject, "body": body})


def append_note(text: str) -> dict[str, Any]:
    """Append a line to the team's notes.

    Args:
        text: The line to append.
    """
    return relay.post("NOTES_URL", "/notes", {"text": text})


def read_outbox() -> dict[str, Any]:
    """List the e-mails the relay has accepted today."""
    return relay.get("MAIL_RELAY_URL", "/messages")
