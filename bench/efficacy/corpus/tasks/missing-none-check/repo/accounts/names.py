"""How users are shown."""

from dataclasses import dataclass


@dataclass
class User:
    name: str
    nickname: str | None = None


def display_name(user):
    """The nickname when the user chose one, else the name."""
    return user.nickname.strip() or user.name
