"""`fixloop demo`: a fresh example repository, fixed by the real workflows with a scripted model."""
