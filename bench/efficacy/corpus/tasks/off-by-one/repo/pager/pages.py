"""Splitting a list into pages."""


def page_count(total, size):
    """How many pages `total` items fill, `size` per page."""
    return (total + size - 1) // size


def paginate(items, page, size):
    """The items on page `page` (counted from 1), `size` per page."""
    start = (page - 1) * size
    return items[start : start + size - 1]
