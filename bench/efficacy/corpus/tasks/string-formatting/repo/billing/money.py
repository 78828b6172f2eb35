"""Showing amounts of money."""


def format_money(cents):
    """An amount in cents as dollars with two decimals: 1234 -> "$12.34"."""
    return f"${cents / 100}"
