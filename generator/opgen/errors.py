class OpgenError(Exception):
    """A user-facing failure: the CLI prints the message on one line and exits non-zero."""
