"""The admin: tables with their seats, the action log, round records, results.

The match seed is never shown, and the log, records and results are read-only
(the log is append-only; only ``game.moves.move`` writes it).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from game.models import Action, MatchResult, RoundRecordRow, Seat, Table


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    fields = ("position", "kind", "user", "guest_name", "bot_name")
    raw_id_fields = ("user",)


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ("public_id", "status", "version", "host", "created_at", "stand_in_bots")
    list_filter = ("status", "stand_in_bots")
    search_fields = ("public_id",)
    exclude = ("seed",)
    readonly_fields = (
        "public_id",
        "version",
        "created_at",
        "started_at",
        "finished_at",
        "turn_started_at",
        "invite_token",
    )
    raw_id_fields = ("host",)
    inlines = [SeatInline]


@admin.register(Action)
class ActionAdmin(ReadOnlyAdmin):
    list_display = (
        "table",
        "version",
        "round_number",
        "seat",
        "action",
        "by_stand_in",
        "created_at",
    )
    list_filter = ("by_stand_in",)
    list_select_related = ("table",)


@admin.register(RoundRecordRow)
class RoundRecordRowAdmin(ReadOnlyAdmin):
    list_display = (
        "table",
        "round_number",
        "seat_kinds",
        "bid_total",
        "points_ns",
        "points_ew",
        "nil_position_ns",
        "nil_position_ew",
        "finished_at",
    )
    list_filter = ("seat_kinds", "nil_position_ns", "nil_position_ew")
    list_select_related = ("table",)


@admin.register(MatchResult)
class MatchResultAdmin(ReadOnlyAdmin):
    list_display = ("table", "winner", "score_ns", "score_ew", "rounds", "finished_at")
    list_select_related = ("table",)


# The admin index links to the staff dashboard (templates/admin/spades_index.html).
admin.site.index_template = "admin/spades_index.html"
