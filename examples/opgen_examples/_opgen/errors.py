class DeclarationError(ValueError):
    """An op declaration (or schema) that cannot be derived from: the message says what to write instead."""

    user_facing = True  # `opgen` prints it on one line rather than a traceback
