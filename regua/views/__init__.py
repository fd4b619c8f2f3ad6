"""The API's read models: what ``/v1`` answers, shared by the service and the public client.

The service's routes declare these as their response models; :mod:`regua.client` parses the
answers into the same classes, so a field the service adds is declared here once. Plain pydantic
models: no HTTP, no database, importable anywhere.
"""
