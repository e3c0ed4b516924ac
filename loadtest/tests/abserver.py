"""laxserver.py keeping every rule, made slower or wrong by its environment: the fake stack that
`make ab`'s tests measure (test_ab_e2e.py).

BUSY_US=n spins n µs of CPU per request (a knob with a known, large cost); GREETING=text answers
/hello with that text instead of the contract's (a knob that breaks the contract). PORT,
HEAD_TIMEOUT_MS and IDLE_TIMEOUT_MS come from the environment like a stack's.
"""
import asyncio
import os
import time

import laxserver

laxserver.NAME = "abserver"  # its Server header
BUSY_S = int(os.environ.get("BUSY_US") or 0) / 1e6
GREETING = os.environ.get("GREETING", "").encode()


class Server(laxserver.Server):
    async def answer(self, method: str, path: str, query: str, reader) -> bytes | None:
        end = time.perf_counter() + BUSY_S
        while time.perf_counter() < end:
            pass
        if GREETING and path == "/hello" and method == "GET":
            return laxserver.response(200, GREETING)
        return await super().answer(method, path, query, reader)


async def main() -> None:
    server = Server("none", int(os.environ["HEAD_TIMEOUT_MS"]) / 1000, int(os.environ["IDLE_TIMEOUT_MS"]) / 1000)
    listener = await asyncio.start_server(server.serve, "127.0.0.1", int(os.environ["PORT"]), backlog=4096)
    async with listener:
        await listener.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
