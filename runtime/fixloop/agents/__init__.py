"""Dispatching a role to a model: the Backend protocol and its implementations."""
