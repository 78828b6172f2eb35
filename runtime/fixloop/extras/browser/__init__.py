"""A real browser and real dev servers for visual self-checks.

- `chromium`: `screenshot(url, out, viewport, timeout_s)` on Debian's Chromium in headless mode,
  one fresh profile per call, the browser in its own process group and killed on timeout;
  `cleanup(max_age_s)` stops stale browsers fixloop started (and only those).
- `devserver`: `dev_server(command, worktree, folder, ...)` starts a project's dev server on a
  free port (in the run's sandbox under bwrap and docker, in its own process group on the host
  under local), waits until it answers HTTP and stops it at the end or on any failure; each
  server is recorded in the caller's folder so `stop_leftovers(folder)` can stop the servers of
  a run that died. `relay`: how the host's browser reaches a server in a sandbox without a
  network (a loopback port relayed to a Unix socket the sandbox shares; `relay_inside` is the
  sandbox's side).
- `processes`: the process table behind both (identity by pid and start time, markers, stopping).
"""
