"""The admin: studies, conditions, participants by pseudonym (with their
answers), assignments.

The raw recruitment ID is shown nowhere here: no list, search or detail page
of the admin names it (``RecruitmentId`` has no admin; payments read it by
a query of their own). Participants are found by pseudonym.
"""

from __future__ import annotations

from django.contrib import admin

from studies.models import (
    Answer,
    Assignment,
    AuditEntry,
    Condition,
    ConsentDeclined,
    Participant,
    Study,
    StudySeat,
    StudyTable,
)


class ConditionInline(admin.TabularInline):
    model = Condition
    extra = 0
    fields = ("position", "name", "seat_plan", "disclosure")
    readonly_fields = fields
    can_delete = False


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("slug", "title", "pilot", "created_at", "updated_at")
    search_fields = ("slug", "title")
    readonly_fields = ("definition_hash", "seed", "source_name", "created_at", "updated_at")
    exclude = ("source", "definition")  # manage.py load_study writes them
    inlines = [ConditionInline]


class AnswerInline(admin.TabularInline):
    model = Answer
    extra = 0
    fields = ("kind", "item_id", "attempt", "value", "created_at")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ("pseudonym", "study", "condition", "stage", "pilot", "withdrawn", "created_at")
    list_filter = ("study", "stage", "pilot", "withdrawn")
    search_fields = ("pseudonym",)
    # Withdrawn by manage.py withdraw_participant only, which removes their data.
    readonly_fields = (
        "pseudonym",
        "study",
        "condition",
        "stage_times",
        "withdrawn",
        "withdrawn_at",
        "created_at",
    )
    inlines = [AnswerInline]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("participant", "study", "condition", "sequence", "block", "position_in_block")
    list_filter = ("study",)
    readonly_fields = [f.name for f in Assignment._meta.fields]


@admin.register(ConsentDeclined)
class ConsentDeclinedAdmin(admin.ModelAdmin):
    list_display = ("study", "count")
    readonly_fields = ("study", "count")


class StudySeatInline(admin.TabularInline):
    model = StudySeat
    extra = 0
    fields = ("position", "participant", "dropped")
    readonly_fields = fields
    can_delete = False


@admin.register(StudyTable)
class StudyTableAdmin(admin.ModelAdmin):
    """The tables the waiting room formed (studies.waiting_room): read only."""

    list_display = ("table", "study", "condition", "filled_by_stand_in", "created_at")
    list_filter = ("study", "condition")
    readonly_fields = ("study", "condition", "table", "filled_by_stand_in", "created_at")
    inlines = [StudySeatInline]


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """The audit log (withdrawals, pilot resets): read only, written by the commands."""

    list_display = ("at", "study", "action", "participant", "by", "reason")
    list_filter = ("study", "action")
    readonly_fields = [f.name for f in AuditEntry._meta.fields]

    def has_add_permission(self, request) -> bool:  # type: ignore[no-untyped-def]
        return False

    def has_delete_permission(self, request, obj=None) -> bool:  # type: ignore[no-untyped-def]
        return False
