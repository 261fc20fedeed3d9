"""A participant's pages (studies.way_in, studies.views, studies.exit_pages), under
/study/<slug>/."""

from django.urls import path

from studies import exit_pages, screening, views, way_in

app_name = "studies"

urlpatterns = [
    path("<str:slug>/", way_in.entry, name="entry"),
    path("<str:slug>/declined/", way_in.declined, name="declined"),
    path("<str:slug>/screening/", screening.screening, name="screening"),
    path("<str:slug>/instructions/", views.instructions, name="instructions"),
    path("<str:slug>/quiz/", views.quiz, name="quiz"),
    path("<str:slug>/waiting/", views.waiting, name="waiting"),
    path("<str:slug>/table/", views.table, name="table"),
    path("<str:slug>/questionnaire/", exit_pages.questionnaire, name="questionnaire"),
    path("<str:slug>/debrief/", exit_pages.debrief, name="debrief"),
    path("<str:slug>/completed/", exit_pages.completion, name="completion"),
    path("<str:slug>/end/", views.end, name="end"),
    path("<str:slug>/state/", views.state, name="state"),
]
