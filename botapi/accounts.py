"""Registering a bot, its token issued, rotated and revoked; a token to its account.

Every change runs in a transaction; a revoked or replaced token's sockets are
closed at once after the commit (``notify.token_withdrawn``).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from botapi import notify, tokens
from botapi.models import BotAccount


def register(owner: Any, name: str, description: str, contact: str) -> tuple[BotAccount, str]:
    """A new bot account and its token (the only time the token is seen)."""
    token = tokens.new_token()
    account = BotAccount.objects.create(
        owner=owner,
        name=name,
        description=description,
        contact=contact,
        token_hash=tokens.hash_of(token),
        token_hint=tokens.hint_of(token),
        token_issued_at=timezone.now(),
    )
    return account, token


def rotate(account: BotAccount) -> str:
    """A new token for ``account``; the old one stops working at once."""
    token = tokens.new_token()
    with transaction.atomic():
        account.token_hash, account.token_hint = tokens.hash_of(token), tokens.hint_of(token)
        account.token_issued_at = timezone.now()
        account.save(update_fields=["token_hash", "token_hint", "token_issued_at"])
        notify.token_withdrawn(account.name)
    return token


def revoke(account: BotAccount) -> None:
    """No token works for ``account`` until a new one is issued; its seats
    are played by the stand-in meanwhile."""
    with transaction.atomic():
        account.token_hash, account.token_hint, account.token_issued_at = "", "", None
        account.save(update_fields=["token_hash", "token_hint", "token_issued_at"])
        notify.token_withdrawn(account.name)


def authenticate(token: str | None) -> BotAccount | None:
    """The account whose live token this is, or None."""
    if not token:
        return None
    digest = tokens.hash_of(token)
    found = BotAccount.objects.filter(token_hash=digest).first()
    if found is None or not tokens.matches(token, found.token_hash):
        return None
    return found


def still_valid(account_id: int, token_hash: str) -> bool:
    """Whether the token a socket signed in with is still the account's."""
    stored = BotAccount.objects.filter(pk=account_id).values_list("token_hash", flat=True).first()
    return stored is not None and tokens.matches_hash(token_hash, stored)


def may_play(name: str) -> bool:
    """A registered bot with a live token may be seated."""
    return BotAccount.objects.filter(name=name).exclude(token_hash="").exists()


def playing_names() -> list[str]:
    return list(BotAccount.objects.exclude(token_hash="").values_list("name", flat=True))
