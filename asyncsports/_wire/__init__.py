"""The wire formats, sans I/O, private: :mod:`.json` frames JSON bytes (for
:mod:`asyncsports.jsonstream` and the decoding), :mod:`.live` is the live feeds' protocol."""
