"""File names of exported reports."""


def base_name(filename):
    """The name without its .csv extension: "sales.csv" -> "sales"."""
    return filename.rstrip(".csv")
