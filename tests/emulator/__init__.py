"""Tests of the embedded emulator, with plain aiohttp requests."""
