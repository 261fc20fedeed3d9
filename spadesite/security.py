"""The Content-Security-Policy header on every response.

The pages load their scripts and styles from ``/static/`` only (no inline
script or style anywhere in the templates), so the policy allows nothing
else: a script injected into a page, a chat line say, would not run.
Websockets go back to the same host (``connect-src 'self'`` covers ws: and
wss: of the page's own host). ``SPADES_CSP`` replaces the policy;
an empty value sends none.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

DEFAULT_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.policy = getattr(settings, "SPADES_CSP", DEFAULT_POLICY)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self.policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = self.policy
        return response
