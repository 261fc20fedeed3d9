from django.urls import path

from botapi import views

app_name = "botapi"

urlpatterns = [
    path("", views.my_bots, name="bots"),
    path("<str:name>/rotate/", views.rotate, name="rotate"),
    path("<str:name>/revoke/", views.revoke, name="revoke"),
    path("<str:name>/settings/", views.bot_settings, name="settings"),
]
