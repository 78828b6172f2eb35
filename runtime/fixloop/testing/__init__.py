"""Test helpers shipped with fixloop, for our tests and for users testing their own documents."""
