"""The JSON API under ``/v1``: one router module per resource, its schemas and error mapping."""
