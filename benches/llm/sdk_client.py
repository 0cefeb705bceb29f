"""The same workload with the official openai Python SDK: N chat completions through
AsyncOpenAI, asyncio.gather under a semaphore of CONCURRENCY. Prints the seconds taken.
Usage: python3 sdk_client.py BASE_URL N CONCURRENCY
"""

import asyncio
import sys
import time

from openai import AsyncOpenAI


async def main(base_url, n, concurrency):
    client = AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    gate = asyncio.Semaphore(concurrency)

    async def one(i):
        async with gate:
            reply = await client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": f"item {i}"}],
            )
            return reply.choices[0].message.content

    started = time.perf_counter()
    answers = await asyncio.gather(*(one(i) for i in range(n)))
    elapsed = time.perf_counter() - started
    assert len(answers) == n and answers[5] == "ok: item 5"
    print(f"{elapsed:.3f}")


asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
