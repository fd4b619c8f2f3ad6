"""One router module per resource of the ``/v1`` API, and no domain logic.

Each route parses the request, checks the caller's role (a dependency in its signature,
:mod:`service.api.deps`), calls the domain function below and answers with a declared response
model. The pages share that logic through the modules the routes call, never through a route.
"""
