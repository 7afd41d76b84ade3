"""pytest fixtures for tests that run against the embedded emulator (work in progress)."""
