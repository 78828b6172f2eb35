"""Runs of the git protocol: a session per workflow run, and recovery of runs that died."""
