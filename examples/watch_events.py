"""Watch the live stream events: fetch the playback address of each as it goes live.

Runs as is against the embedded emulator (``python examples/watch_events.py``): its
clock is moved on by hand so that an event ends. Against the service, give the client
``streaming_url`` and ``streaming_credentials=StreamingCredentials.from_secret(
operator_id, secret, your_ipv4)`` and watch with the default 30-second interval.
"""

import asyncio
import contextlib

from asyncsports import BadRequestError
from asyncsports.emulator import Emulator


async def main() -> None:
    async with Emulator(seed=0) as emu, emu.client() as client:
        playing: dict[int, str] = {}
        # A short interval for the demonstration; the service suggests about 30 seconds.
        async with contextlib.aclosing(client.events.watch(interval=0.05)) as changes:
            async for change in changes:
                event = change.record
                if change.kind == "ended":
                    playing.pop(event.id, None)  # stop asking for its stream
                    print("ended:", event.title)
                    break
                try:
                    playback = await client.events.playback(event.id)
                except BadRequestError:  # it ended between the listing and this request
                    continue
                playing[event.id] = playback.hls_url
                print("live: ", event.title, playback.hls_url)
                if len(playing) == 1:
                    emu.clock.advance(4 * 3600)  # the emulator's clock: four hours on
        print(f"{len(playing)} still playing")


if __name__ == "__main__":
    asyncio.run(main())
