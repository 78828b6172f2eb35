# The conformance plugins are judged by test_conformance.py; the fixloop pytest plugin would
# otherwise collect their documents (some are broken on purpose) as test items.
collect_ignore_glob = ["conformance/*"]
