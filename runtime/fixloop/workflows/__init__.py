"""The workflows fixloop runs headless: `kernel/` (what they share) and one package each."""
