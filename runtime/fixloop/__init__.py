"""fixloop: verified, automated code fixing driven by Markdown agent documents."""

__version__ = "0.1.0"
