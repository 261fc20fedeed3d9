from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def home(request: HttpRequest) -> HttpResponse:
    """The front page: what the site is, and where play will start."""
    return render(request, "lobby/home.html")
