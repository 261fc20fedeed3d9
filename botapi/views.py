"""The owner's pages: their bots, register one, rotate or revoke its token.

A token is shown once, on the page that answers the POST that made it (never
stored in plain, never in a URL or a session); every change is a POST with
the CSRF token, by the bot's owner, signed in.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from botapi import accounts
from botapi.forms import RegisterForm, SettingsForm
from botapi.models import MAX_TABLES_CEILING, BotAccount
from botapi.routing import BOT_PATH


def _mine(request: HttpRequest, name: str) -> BotAccount:
    found = BotAccount.objects.filter(owner=request.user, name=name).first()
    if found is None:
        raise Http404("you have no bot of that name")
    return found


def _shown_once(request: HttpRequest, account: BotAccount, token: str) -> HttpResponse:
    context = {"account": account, "token": token, "socket_path": BOT_PATH}
    return render(request, "botapi/token.html", context)


@login_required
@never_cache
def my_bots(request: HttpRequest) -> HttpResponse:
    form = RegisterForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            with transaction.atomic():
                account, token = accounts.register(
                    request.user, d["name"], d["description"], d["contact"]
                )
        except IntegrityError:  # the same name registered a moment ago
            form.add_error("name", "A bot of that name is registered already.")
        else:
            return _shown_once(request, account, token)
    bots = BotAccount.objects.filter(owner=request.user)
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "bots": bots, "max_tables_ceiling": MAX_TABLES_CEILING}
    return render(request, "botapi/bots.html", context, status=status)


@login_required
@never_cache
@require_POST
def rotate(request: HttpRequest, name: str) -> HttpResponse:
    account = _mine(request, name)
    return _shown_once(request, account, accounts.rotate(account))


@login_required
@require_POST
def revoke(request: HttpRequest, name: str) -> HttpResponse:
    accounts.revoke(_mine(request, name))
    return redirect("botapi:bots")


@login_required
@require_POST
def bot_settings(request: HttpRequest, name: str) -> HttpResponse:
    """Save whether the bot accepts open challenges and its cap of tables; a
    value out of range is refused (400) and changes nothing."""
    form = SettingsForm(request.POST, instance=_mine(request, name))
    if not form.is_valid():
        return HttpResponse(f"Not saved: {form.errors.as_text()}", status=400,
                            content_type="text/plain")  # fmt: skip
    form.save()
    return redirect("botapi:bots")
