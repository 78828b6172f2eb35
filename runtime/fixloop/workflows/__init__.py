"""Workflow state machines: loops, rounds and buckets over documents, agents and steps."""
