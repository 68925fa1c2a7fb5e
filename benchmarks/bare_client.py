"""The bare aiohttp client: the same requests an `assay run` sends, with nothing else.

The baseline `assay run` is measured against (issue 23 item 3: at most 1.2× this, in the same
benchmark run). One `ClientSession`, `concurrency + judge_concurrency` workers taking cases in
order; each case POSTs one Chat Completions request under a `concurrency` semaphore, parses
the JSON reply and, with `--judge`, then POSTs a judge request (a system message carrying the
reply schema, as assay's judge client sends, so the local server answers it as a judge) under a
`judge_concurrency` semaphore. Nothing is stored. Run as its own process, so its figure
includes interpreter start-up and imports as `assay run`'s does:

    python benchmarks/bare_client.py URL --cases 1000 --concurrency 32
    python benchmarks/bare_client.py URL --cases 5000 --concurrency 64 --judge
"""

from __future__ import annotations

import argparse
import asyncio
import json

import aiohttp

SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "number"}, "reasoning": {"type": "string"}},
    "required": ["score", "reasoning"],
}
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json",
    "Authorization": "Bearer unused",
}


async def post(session: aiohttp.ClientSession, url: str, body: dict[str, object]) -> object:
    async with session.post(url, data=json.dumps(body).encode(), headers=HEADERS) as response:
        raw = await response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {raw[:200]!r}")
    reply = json.loads(raw)
    return reply["choices"][0]["message"]["content"]


async def run(
    base_url: str, cases: int, concurrency: int, judge_concurrency: int, judge: bool
) -> int:
    url = f"{base_url.rstrip('/')}/chat/completions"
    targets = asyncio.Semaphore(concurrency)
    judges = asyncio.Semaphore(judge_concurrency)
    numbers = iter(range(cases))
    done = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal done
        for i in numbers:
            question = f"question {i}"
            body = {"model": "fake-model", "messages": [{"role": "user", "content": question}]}
            async with targets:
                output = await post(session, url, body)
            if judge:
                system = f"You grade replies. JSON Schema of the reply: {json.dumps(SCHEMA)}"
                asked = {
                    "model": "fake-judge",
                    "temperature": 0,
                    "messages": [
                        {"role": "system", "content": system},
                        {"role": "user", "content": f"Input: {question}\nOutput: {output}"},
                    ],
                }
                async with judges:
                    await post(session, url, asked)
            done += 1

    connector = aiohttp.TCPConnector(limit=1000)
    async with aiohttp.ClientSession(connector=connector) as session:
        workers = concurrency + (judge_concurrency if judge else 0)
        await asyncio.gather(*(worker(session) for _ in range(workers)))
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("--cases", type=int, required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--judge-concurrency", type=int)
    parser.add_argument("--judge", action="store_true", help="one judge call per case")
    args = parser.parse_args()
    judge_concurrency = args.judge_concurrency or args.concurrency
    done = asyncio.run(
        run(args.base_url, args.cases, args.concurrency, judge_concurrency, args.judge)
    )
    if done != args.cases:
        raise SystemExit(f"{done} of {args.cases} cases done")


if __name__ == "__main__":
    main()
