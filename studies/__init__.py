"""Human-subject studies: a pre-registered study file, its conditions, consent,
participants under a pseudonym and their balanced assignment to conditions.

A layer-3 app beside ``lobby``: it seats participants and bots at the
server's tables (``game``) but has pages, consent and privacy rules of its
own, so the two apps never import each other. The raw recruitment ID lives
in one model only (``RecruitmentId``); everything else uses the pseudonym.
"""
