"""The staff dashboard: the human-vs-bot analyses with filters, and the round-log exports.

Staff only: a visitor who is not signed in is sent to the login page, a
signed-in player who is not staff gets 403. Every view reads the same GET
filters (:class:`DashboardFilterForm`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import wraps
from typing import Any

from django import forms
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from game.ratings import bands
from game.research import analytics, exports, league_table, study_keys, tally_flush
from game.research.analytics import Filters
from game.research.round_columns import MAKEUPS

View = Callable[..., HttpResponse]
NOT_A_STUDY = "none"  # the study filter's choice for the tables no study formed


def staff_required(view: View) -> View:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (request.user.is_active and request.user.is_staff):
            raise PermissionDenied("the dashboard is for staff")
        return view(request, *args, **kwargs)

    return wrapped


class DashboardFilterForm(forms.Form):
    """The filters; they select the measured partnerships (``game.research.analytics_filters``)."""

    date_from = forms.DateField(required=False, label="From",
                                widget=forms.DateInput(attrs={"type": "date"}))  # fmt: skip
    date_to = forms.DateField(required=False, label="To",
                              widget=forms.DateInput(attrs={"type": "date"}))  # fmt: skip
    rules = forms.ChoiceField(required=False, label="Rule set")
    bot = forms.ChoiceField(required=False, label="Measured partnership's bot")
    makeup = forms.MultipleChoiceField(
        required=False,
        label="Measured partnership",
        choices=[(m, analytics.MAKEUP_LABELS[m]) for m in MAKEUPS],
        widget=forms.CheckboxSelectMultiple,
    )
    against = forms.MultipleChoiceField(
        required=False,
        label="Against",
        choices=[(m, analytics.MAKEUP_LABELS[m]) for m in MAKEUPS],
        widget=forms.CheckboxSelectMultiple,
    )
    stand_ins = forms.BooleanField(required=False, label="Include stand-in rounds")
    study = forms.ChoiceField(required=False, label="Study")
    condition = forms.ChoiceField(required=False, label="Condition")
    pilot = forms.BooleanField(required=False, label="Include pilot data")
    band = forms.MultipleChoiceField(
        required=False,
        label="Rating band of its people",
        widget=forms.CheckboxSelectMultiple,
        help_text="the measured partnership's people's conservative rating (mu - 3 sigma, "
        "their mean for two) as the match started; 0: no rated human (bots only, or "
        "people with no rated match yet)",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rule_sets = analytics.rule_sets()
        self.fields["rules"].choices = [("", "Any rule set")] + [
            (r["key"], f"{r['label']} ({r['rounds']} rounds)") for r in self.rule_sets
        ]
        self.fields["bot"].choices = [("", "Any (or none)")] + [
            (b, b.replace("/", " & ")) for b in analytics.bot_names_in_use()
        ]
        self.fields["band"].choices = [(str(b), label) for b, label in bands.choices()]
        top = len(self.fields["band"].choices) - 1
        self.fields["band"].error_messages["invalid_choice"] = (
            f"rating band %(value)s is out of range: the bands are 0 to {top}"
        )
        self.studies = {s.slug: s for s in study_keys.studies()}
        self.fields["study"].choices = [("", "Any (or none)"), (NOT_A_STUDY, "Not in a study")] + [
            (s.slug, f"{s.title} ({s.slug}{', pilot' if s.pilot else ''})")
            for s in self.studies.values()
        ]
        self.fields["condition"].choices = [("", "Any condition")] + [
            (str(pk), f"{s.slug}: {name}")
            for s in self.studies.values()
            for pk, name in s.conditions
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        a, b = data.get("date_from"), data.get("date_to")
        if a and b and a > b:
            raise forms.ValidationError("the start date is after the end date")
        if data.get("bot") and data.get("makeup") == ["HH"]:
            raise forms.ValidationError("a human+human partnership has no bot")
        study, condition = data.get("study"), data.get("condition")
        if study and condition and int(condition) not in dict(self.conditions_of(study)):
            raise forms.ValidationError("that condition is not one of the study's")
        return data

    def conditions_of(self, study: str) -> tuple[tuple[int, str], ...]:
        """(id, name) of a study's conditions; ``NOT_A_STUDY`` is the one key 0."""
        if study == NOT_A_STUDY:
            return ((study_keys.NO_STUDY, "not in a study"),)
        return self.studies[study].conditions

    def chosen_conditions(self) -> list[tuple[int, str]]:
        """The conditions the filters keep (empty: any table's rounds)."""
        d = self.cleaned_data
        if d.get("condition"):
            pk = int(d["condition"])
            return [(c, n) for s in self.studies.values() for c, n in s.conditions if c == pk]
        return list(self.conditions_of(d["study"])) if d.get("study") else []

    def filters(self) -> Filters:
        d = self.cleaned_data
        return Filters(
            date_from=d.get("date_from"),
            date_to=d.get("date_to"),
            rules_key=d.get("rules") or "",
            bot=d.get("bot") or "",
            makeups=tuple(d.get("makeup") or ()),
            against=tuple(d.get("against") or ()),
            stand_ins=bool(d.get("stand_ins")),
            # A study with no condition keeps nothing (no table has condition -1).
            conditions=tuple(c for c, _ in self.chosen_conditions())
            or ((-1,) if d.get("study") else ()),
            pilot=bool(d.get("pilot")),
            bands=tuple(sorted(int(b) for b in d.get("band") or ())),
        )


def measured(filters: Filters) -> str:
    """Which partnerships the figures count, in words."""
    labels = analytics.MAKEUP_LABELS
    who = " or ".join(labels[m] for m in filters.makeups) or "every"
    text = f"{who} partnership{'s' if not filters.makeups else ''}"
    if filters.bot:
        text += f" whose bots are {filters.bot.replace('/', ' & ')}"
    if filters.against:
        text += " against " + " or ".join(labels[m] for m in filters.against)
    if filters.bands:
        text += " with people in rating band " + " or ".join(str(b) for b in filters.bands)
    text += "" if filters.stand_ins else "; stand-in rounds left out"
    return text + ("" if filters.pilot else "; pilot data left out")


def _form(request: HttpRequest) -> DashboardFilterForm:
    return DashboardFilterForm(request.GET or None)


def _filters_or_none(form: DashboardFilterForm) -> Filters | None:
    if not form.is_bound:
        return Filters()
    return form.filters() if form.is_valid() else None


@require_GET
@staff_required
def dashboard(request: HttpRequest) -> HttpResponse:
    tally_flush.flush_pending()  # rounds ended in the last second: exact to this moment
    form = _form(request)
    filters = _filters_or_none(form)
    data = None
    if filters is not None:
        # A study chosen: the round-type table per condition too.
        by_condition = [c for c in form.chosen_conditions() if c[0]] if form.is_bound else []
        data = analytics.all_analyses(filters, by_condition)
    charts = None
    if data is not None and filters is not None:
        data["measured"] = measured(filters)
    if data is not None:
        charts = {
            "bid_sums": data["bid_sums"],
            "points_by_bid_sum": data["points_by_bid_sum"],
            "points_histogram": data["points_histogram"],
            "makeup_labels": analytics.MAKEUP_LABELS,
        }
    return render(
        request,
        "dashboard/dashboard.html",
        {
            "form": form,
            "data": data,
            "charts": charts,
            "makeups": MAKEUPS,
            "makeup_labels": analytics.MAKEUP_LABELS,
            "query": request.GET.urlencode(),
            "league": league_table.latest(),
        },
        status=400 if filters is None else 200,  # bad filters: said why, nothing shown
    )


def _export(request: HttpRequest, fmt: str) -> HttpResponse:
    form = _form(request)
    filters = _filters_or_none(form)
    if filters is None:
        return HttpResponse(
            "Bad filters: " + "; ".join(e for errs in form.errors.values() for e in errs),
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    if fmt == "csv":
        response = StreamingHttpResponse(exports.iter_csv(filters),
                                         content_type="text/csv; charset=utf-8")  # fmt: skip
        name = f"spades-rounds-{stamp}.csv"
    else:
        response = StreamingHttpResponse(exports.iter_jsonl(filters),
                                         content_type="application/x-ndjson")  # fmt: skip
        name = f"spades-rounds-{stamp}.jsonl"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["Cache-Control"] = "no-store"
    return response


@require_GET
@staff_required
def export_csv(request: HttpRequest) -> HttpResponse:
    return _export(request, "csv")


@require_GET
@staff_required
def export_jsonl(request: HttpRequest) -> HttpResponse:
    return _export(request, "jsonl")
