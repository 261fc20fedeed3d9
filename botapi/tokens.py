"""A bot's API token: shown to its owner once, kept only as a hash.

A token is 32 random bytes (``secrets``), so a plain SHA-256 of it is enough
to store (nobody can guess their way to a preimage; a slow hash is for
passwords people choose). The server finds the account by the hash's index,
then compares the hashes in constant time all the same.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

PREFIX = "sbt_"  # tells a reader (and a secret scanner) what the string is
HINT_CHARS = 8  # PREFIX and the first characters: enough to tell two tokens apart


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def hash_of(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def hint_of(token: str) -> str:
    return token[:HINT_CHARS]


def matches(token: str, stored_hash: str) -> bool:
    """Whether ``token`` is the one ``stored_hash`` was made of (constant time)."""
    return bool(stored_hash) and hmac.compare_digest(hash_of(token), stored_hash)


def from_header(value: str) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    scheme, _, token = value.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token.startswith(PREFIX) or len(token) > 100:
        return None
    return token


def matches_hash(digest: str, stored_hash: str) -> bool:
    """Two stored hashes alike (constant time): a socket's token still the account's."""
    return bool(stored_hash) and hmac.compare_digest(digest, stored_hash)
