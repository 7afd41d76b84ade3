"""Iteration over the HTTP core, private: :mod:`.walk` walks numbered pages ahead of the
consumer; :mod:`.watch` diffs polls of a listing and paces the polling."""
