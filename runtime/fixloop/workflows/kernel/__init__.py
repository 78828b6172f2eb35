"""What every workflow shares: the Workflow base and Context, the three ways work stops short
(StepFailed, SkipItem, Escalate), item statuses, questions to the user, and refused writes."""
