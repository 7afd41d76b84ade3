"""Follow a live fixture over the websocket, from its first action to its last.

Runs as is against the embedded emulator (``python examples/live_feed.py``), whose
clock runs here an hour a second so that a whole game takes a few seconds. Against the
service, give the client ``live_url="wss://dde-streams.data.srarena.io"``.
"""

import asyncio

from asyncsports.emulator import Emulator


async def main() -> None:
    async with Emulator(seed=0, speed=3600) as emu, emu.client() as client:
        live = await client.fixtures.list("basketball", status="live").collect()
        fixture = live[0]  # ids come from listings
        print("following", fixture.name)
        async with client.live.actions("basketball", fixture.id) as feed:
            async for action in feed:
                summary = action.fixture_summary
                score = f"{summary.home_team_score}-{summary.away_team_score}"
                print(f"{action.fixture_action.fixture_action_type:<26} {score}")
        # The feed ends after the finishing record; its position resumes a later feed.
        print(f"{feed.position} actions, finished: {feed.finished}")


if __name__ == "__main__":
    asyncio.run(main())
