"""A webhook receiver as a process of its own, the webhook kind of the tests' bus servers
(tests/support/servers.py, ``WebhookBus``): ``python webhook_receiver.py PORT FILE SECRET``
(the tests' secret, support/webhooks.py).

Each POST to ``/hook`` whose signature ``standardwebhooks`` verifies is appended to FILE as one JSON line (``id``, ``body``)
before it is answered 204; one that does not verify is answered 401 (which holds the
sender's feed: a test sees it). Stopped or killed, it keeps what FILE holds; started
again on it, it goes on appending.
"""

from __future__ import annotations

import json
import sys

from aiohttp import web
from standardwebhooks import Webhook, WebhookVerificationError


def main() -> None:
    port, path, secret = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    hook = Webhook(secret)
    out = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the process's life

    async def receive(request: web.Request) -> web.Response:
        body = await request.read()
        try:
            hook.verify(body, dict(request.headers))
        except WebhookVerificationError:
            return web.Response(status=401)
        line = {"id": request.headers["webhook-id"], "body": body.decode()}
        out.write(json.dumps(line) + "\n")
        out.flush()  # in the kernel's hands before the answer: a kill -9 keeps it
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", receive)
    web.run_app(app, host="127.0.0.1", port=port, print=None, handle_signals=True)


if __name__ == "__main__":
    main()
