"""Who may do what: tokens with roles, sessions, the secret, reserved pools, artifact reads.

Only a keyed hash of a token is stored (:mod:`.tokens`); the secret that keys it, sessions and
CSRF tokens lives in :mod:`.secret` and :mod:`.sessions`; :mod:`.pools` is the one place where a
reserved task turns into what each role may see, and :mod:`.artifacts` the one rule for reading
stored bytes. HTTP status codes are attached above, in :mod:`service.api.errors`.
"""
