"""The dashboard: one `/api/metrics` document for people and agents, and the page that
draws it. Stdlib only (http.server in a thread): nothing to install, ~1 ms to start."""
