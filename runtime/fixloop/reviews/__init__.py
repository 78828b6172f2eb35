"""GSD-format review documents: REVIEW.md (parse, write) and REVIEW-FIX.md (write)."""
