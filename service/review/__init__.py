"""Human review: a blinded queue of (run, criterion) items, agreement, adjudication and pages.

The pure parts (:mod:`service.review.queue`, :mod:`service.review.blinding`,
:mod:`service.review.agreement`, :mod:`service.review.outcome`) do no I/O; storage lives in
:mod:`service.review.store`; what a reviewer does (take the next item, label it) is
:mod:`service.review.actions`, and what they are shown the models of
:mod:`service.review.payloads`, both served by :mod:`service.api.routes.reviews` and
:mod:`service.web.pages`.
"""
