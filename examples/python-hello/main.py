# A script agent in Python, the twin of examples/hello/main.js: hugind calls
# main(input) with {"args", "meta"} and prints its return value as JSON.
import asyncio

from lib.greet import greet  # a module vendored beside main.py

import hugind


async def main(input):
    who = " ".join(input["args"]) if input["args"] else "world"
    greeting = input["meta"]["env"].get("HELLO_GREETING") or "Hello"
    hugind.eprint(f"hello: greeting {who}")  # progress goes to stderr, never into the result
    await asyncio.sleep(0.001)
    return {"message": greet(greeting, who), "runtime": f"hugind {hugind.version()}"}
