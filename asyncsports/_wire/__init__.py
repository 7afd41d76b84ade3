"""The pure core, private: no I/O, the bottom layer that every other one may import.

- :mod:`.json` frames JSON bytes (for :mod:`asyncsports.jsonstream` and the decoding);
- :mod:`.decoding`: where every DecodeError is built;
- :mod:`.retry`: the retry decision (:func:`~.retry.decide`) every loop asks;
- :mod:`.clock`: the service's clock, read from its ``Date`` header;
- :mod:`.live`: the live feeds' protocol;
- :mod:`.secrets` and :mod:`.recording`: the secrets policy and the recording format.
- :mod:`.defaults`: the engines' defaults the command line shows in its --help.
"""
