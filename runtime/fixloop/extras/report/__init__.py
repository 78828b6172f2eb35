"""A run's report as one self-contained HTML page (`fixloop runs show ID --html FILE`)."""
