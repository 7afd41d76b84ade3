"""For the tests of projects that use asyncsports.

:mod:`asyncsports.testing.plugin` is a pytest plugin, registered as a ``pytest11`` entry
point (so installing asyncsports enables it; ``-p no:asyncsports`` disables it): the
``sports_emulator`` and ``sports_client`` fixtures and the ``emulator`` marker. The
emulator itself is :class:`asyncsports.emulator.Emulator`.

Importing this package imports nothing else: pytest loads it at start-up.
"""
