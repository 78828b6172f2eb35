"""A real browser and real dev servers for visual self-checks.

- `chromium`: `screenshot(url, out, viewport, timeout_s)` on Debian's Chromium in headless mode,
  one fresh profile per call, the browser in its own process group and killed on timeout;
  `cleanup(max_age_s)` stops stale browsers fixloop started (and only those).
- `devserver`: `dev_server(command, worktree, folder, ...)` starts a project's dev server on a
  free port in its own process group, waits until it answers HTTP and stops it at the end or on
  any failure; each server is recorded in the caller's folder so `stop_leftovers(folder)` can stop
  the servers of a run that died.
- `processes`: the process table behind both (identity by pid and start time, markers, stopping).
"""
