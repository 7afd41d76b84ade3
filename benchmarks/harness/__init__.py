"""The benchmark harness: the server, the child processes, measuring, the registry of
cases and the results table. It never imports a case by name (see :mod:`.registry`)."""
