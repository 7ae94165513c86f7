"""Whose hub token is this: the hub's answer, remembered for a short time.

Every check carries the learner's hub API token, and only the hub knows whose it is.
Asking it for every check costs the hub and the service a request each; a class's first
checks would all ask at once, and made-up tokens would each cost the hub a question.
`TokenOwners` remembers the hub's yes for `ttl` seconds and its no for `no_ttl` seconds
(a token made up again and again is asked about once in that time), each for at most
`size` tokens (the least recently used go first), and asks once for a token that many
checks carry at the same moment. A failure to ask is never remembered: what the hub did
not confirm is refused. Tokens are kept only as their SHA-256 digests.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

Model = dict[str, Any]
DEFAULT_TTL = 60.0  # s: a revoked token or a changed role is seen within a minute
DEFAULT_NO_TTL = 10.0  # s: a token the hub refused is refused without asking meanwhile
DEFAULT_SIZE = 10_000  # tokens: a large class, each with a few servers (and as many noes)


class TokenOwners:
    """The hub's user model for a token (None: the hub does not know it), cached."""

    def __init__(
        self,
        ask_hub: Callable[[str], Awaitable[Model | None]],
        ttl: float = DEFAULT_TTL,
        size: int = DEFAULT_SIZE,
        clock: Callable[[], float] = time.monotonic,
        no_ttl: float = DEFAULT_NO_TTL,
    ) -> None:
        if ttl <= 0 or size <= 0 or no_ttl <= 0:
            raise ValueError("ttl, no_ttl and size must be positive")
        self.ask_hub = ask_hub
        self.ttl = ttl
        self.no_ttl = no_ttl
        self.size = size
        self.clock = clock
        self._known: OrderedDict[str, tuple[float, Model]] = OrderedDict()
        self._refused: OrderedDict[str, tuple[float, None]] = OrderedDict()
        self._asking: dict[str, asyncio.Future[Model | None]] = {}
        self.hub_asked = 0  # how many times the hub was asked (for tests and benchmarks)

    def __len__(self) -> int:
        return len(self._known)

    def _remembered(self, key: str, kept: OrderedDict[str, tuple[float, Any]]) -> bool:
        """Whether `kept` holds `key` still (an expired entry is dropped)."""
        entry = kept.get(key)
        if entry is None:
            return False
        if self.clock() >= entry[0]:
            del kept[key]
            return False
        kept.move_to_end(key)
        return True

    def _remember(self, key: str, model: Any, kept: OrderedDict[str, Any], ttl: float) -> None:
        kept[key] = (self.clock() + ttl, model)
        kept.move_to_end(key)
        while len(kept) > self.size:
            kept.popitem(last=False)

    async def owner(self, token: str) -> Model | None:
        """Whom the hub says `token` belongs to; errors asking it propagate (uncached)."""
        key = hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()
        if self._remembered(key, self._known):
            return self._known[key][1]
        if self._remembered(key, self._refused):
            return None
        pending = self._asking.get(key)
        if pending is not None:  # another check with this token is asking right now
            return await asyncio.shield(pending)
        future: asyncio.Future[Model | None] = asyncio.get_running_loop().create_future()
        self._asking[key] = future
        try:
            self.hub_asked += 1
            model = await self.ask_hub(token)
        except Exception as error:
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning when none waits
            raise
        except BaseException:  # cancelled (the service stopping): so are those waiting
            future.cancel()
            raise
        else:
            future.set_result(model)
            if model is not None:
                self._remember(key, model, self._known, self.ttl)
            else:
                self._remember(key, None, self._refused, self.no_ttl)
            return model
        finally:
            del self._asking[key]
