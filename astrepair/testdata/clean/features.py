"""Feature sampler: constructs repair must keep parseable."""
import asyncio
import os.path as osp
from collections import (
    OrderedDict,
    defaultdict,
)
from typing import Any

CONSTANT = {
    "a": 1,
    "b": [1, 2,
          3],
}


def decorator(fn):
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@decorator
def handle(event: dict[str, Any],
           retries: int = 3) -> str:
    """Handle an event.

    Multi-line docstring.
    """
    for attempt in range(retries):
        try:
            value = event["value"]
        except KeyError as exc:
            print("missing", exc)
            continue
        except (TypeError, ValueError):
            raise
        else:
            print("ok")
        finally:
            print("attempt", attempt)
    while True:
        if retries > 10:
            break
        elif retries > 5:
            retries -= 1
        else:
            retries += 1
            break
    else:
        pass
    with open(osp.join("a", "b")) as fh, \
            open("c") as gh:
        data = fh.read() + gh.read()
    match event:
        case {"kind": "a"}:
            return "a"
        case [x, y, *rest]:
            return str(x)
        case _:
            return data
    return "done"


class Base:
    pass


class Worker(Base):
    """A worker."""

    registry = OrderedDict()
    counts = defaultdict(int)

    def __init__(self, name):
        self.name = name
        self.queue = []

    @property
    def size(self):
        return len(self.queue)

    @staticmethod
    def make(name):
        return Worker(name)

    async def run(self):
        async with asyncio.timeout(3):
            async for item in self.items():
                await asyncio.sleep(0)
                if item:
                    self.counts[item] += 1
        text = f"""
        {self.name}
        """
        return text

    def items(self):
        yield from self.queue


def main():
    w = Worker.make("x")
    squares = [
        i * i
        for i in range(10)
        if i % 2
    ]
    lam = lambda x: (
        x + 1
    )
    print(handle({"value": 1}), squares, lam(2), CONSTANT)
    return w


if __name__ == "__main__":
    main()
