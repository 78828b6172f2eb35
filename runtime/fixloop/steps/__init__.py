"""Executable workflow steps: run a document step's bash, traced, with its outputs parsed."""
