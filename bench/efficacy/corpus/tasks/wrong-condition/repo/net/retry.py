"""When to try a request again."""

MAX_ATTEMPTS = 3


def should_retry(status, attempt):
    """Retry server errors (5xx), at most MAX_ATTEMPTS attempts in all."""
    return status < 500 and attempt < MAX_ATTEMPTS
