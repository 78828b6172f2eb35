"""URL slugs: lower-case letters, digits and hyphens."""

import re

SLUG = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def is_valid_slug(text):
    return SLUG.match(text) is not None
