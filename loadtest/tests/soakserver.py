"""abserver.py made to misbehave over time, by its environment: the servers `make soak`'s detectors
are proved on (test_soak_e2e.py).

LEAK_MIB_PER_S=n keeps n MiB a second more (touched, so it is resident); STALL_EVERY_S=s with
STALL_MS=m blocks the event loop for m ms every s seconds, as a stop-the-world pause would. Without
them it is abserver, which keeps the contract's /hello and does nothing over time.
"""
import asyncio
import os
import time

import abserver
import laxserver

laxserver.NAME = "soakserver"  # its Server header: the contract wants the stack's name

LEAK_BYTES_PER_TICK = int(float(os.environ.get("LEAK_MIB_PER_S") or 0) * 2**20 / 10)
STALL_EVERY_S = float(os.environ.get("STALL_EVERY_S") or 0)
STALL_S = float(os.environ.get("STALL_MS") or 0) / 1000


async def leak() -> None:
    kept = []
    while LEAK_BYTES_PER_TICK:
        kept.append(b"x" * LEAK_BYTES_PER_TICK)
        await asyncio.sleep(0.1)


async def stall() -> None:
    while STALL_EVERY_S and STALL_S:
        await asyncio.sleep(STALL_EVERY_S)
        time.sleep(STALL_S)  # blocks the loop: nothing is read, parsed or answered meanwhile


async def main() -> None:
    await asyncio.gather(abserver.main(), leak(), stall())


if __name__ == "__main__":
    asyncio.run(main())
