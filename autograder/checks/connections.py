"""The check service's HTTP server: tornado's, holding a bounded number of connections and
accepting them through a loop that outlives running out of file descriptors.

A new connection first waits in the doorway, where its request's headers are read into a
buffer of its own: a socket, a buffer and a line in a table, no tornado objects. Only a
connection whose headers are complete goes on to tornado (which reads them from that
buffer first); one whose headers carry no hub token is answered 403 there and then
(`early_answer`), and one that sends more than `HEADER_LIMIT` bytes of headers is
closed. Idle and half-sent headers (a flood of them) so cost the service an accept, a
read and a close each, and tornado never sees them.

At most `max_connections` are open at once, a number kept `RESERVE` descriptors under the
process's file limit (`connection_cap`). A connection still waiting for a request's
headers (in the doorway, or kept alive by tornado between requests) holds no learner's
check: when a new one arrives at the cap, the one that has waited longest is closed to
make room; if every connection is in a request, the new one is closed instead. Should
accepting fail for want of descriptors all the same (EMFILE, ENFILE), the oldest waiting
connections are closed and the listening socket is left unwatched for `PAUSE` seconds,
where tornado's own loop would be woken for it again and again, spinning. The doorway's
headers are timed by `header_timeout` (a sweep each `SWEEP` seconds), idleness between
requests by tornado's `idle_connection_timeout`, bodies by `body_timeout`.
"""

from __future__ import annotations

import contextlib
import errno
import resource
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice, takewhile
from typing import Any, cast

from tornado import httputil
from tornado.http1connection import HTTP1ServerConnection
from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop, PeriodicCallback
from tornado.iostream import IOStream
from tornado.netutil import bind_sockets

RESERVE = 64  # descriptors kept free of connections: judges' channels, the hub, files
PAUSE = 0.5  # s without accepting once descriptors ran out
FREED_WHEN_OUT = 16  # waiting connections closed when descriptors ran out
ACCEPTED_AT_ONCE = 128  # connections accepted per wake-up (as tornado's loop)
BACKLOG = 4096  # connections the kernel queues for accepting (the system may cap it): with
# tornado's 128, a flood of connections filled the queue, and a learner's connection was
# dropped and retried after 1, 3, 7 ... s
RECEIVE_BUFFER = 128 * 1024  # bytes a connection's kernel buffer holds unread
OUT_OF_DESCRIPTORS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
HEADER_LIMIT = 16 * 1024  # bytes of a request's headers the doorway reads (a check's: 0.3 KB)
SWEEP = 0.5  # s between looks for doorway connections past their header timeout
END_OF_HEADERS = b"\r\n\r\n"


def connection_cap(wanted: int, kept_open: int) -> int:
    """Connections the service may hold: `wanted`, fewer if the soft file limit less
    `RESERVE` and the `kept_open` descriptors it needs besides (judges' channels) is less."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return max(1, wanted)
    return max(1, min(wanted, soft - RESERVE - kept_open))


@dataclass
class Arrival:
    """A connection in the doorway: its address, when it came, the headers read so far."""

    address: Any
    came: float
    read: bytearray = field(default_factory=bytearray)


class _ReadAhead(IOStream):
    """A connection's stream that first gives what the doorway has read of it."""

    def __init__(self, connection: socket.socket, read: bytearray, **options: Any) -> None:
        super().__init__(connection, **options)
        self.ahead = read

    def read_from_fd(self, buf: bytearray | memoryview) -> int | None:
        if not self.ahead:
            return super().read_from_fd(buf)
        size = min(len(buf), len(self.ahead))
        buf[:size] = self.ahead[:size]
        del self.ahead[:size]
        return size


class _Watched(httputil.HTTPMessageDelegate):
    """A request's delegate that tells the server once the request's headers are in."""

    def __init__(
        self, inner: httputil.HTTPMessageDelegate, server: CheckServer, stream: IOStream
    ) -> None:
        self.inner = inner
        self.server = server
        self.stream = stream

    def headers_received(
        self,
        start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
        headers: httputil.HTTPHeaders,
    ) -> Any:
        if self.stream in self.server.held:
            self.server.held[self.stream] = False
        return self.inner.headers_received(start_line, headers)

    def data_received(self, chunk: bytes) -> Any:
        return self.inner.data_received(chunk)

    def finish(self) -> None:
        self.inner.finish()

    def on_connection_close(self) -> None:
        self.inner.on_connection_close()


class CheckServer(HTTPServer):
    """tornado's HTTP server with a cap on connections and a guarded accept loop."""

    max_connections: int
    header_timeout: float  # s a connection may take to send its request's headers
    # each connection tornado serves -> whether it waits for a request's headers, oldest
    # first (entered when handed over: tornado starts serving it on the loop's next turn)
    held: dict[IOStream, bool]
    doorway: dict[socket.socket, Arrival]  # connections reading their headers, oldest first
    # a request's start line and headers -> the whole answer to send before closing, or
    # None: on to tornado
    early_answer: Callable[[bytes], bytes | None] | None = None
    evicted = 0  # waiting connections closed to make room
    refused = 0  # new connections closed: every open one was in a request
    ran_out = 0  # times accepting found no descriptor
    answered_early = 0  # requests answered from the doorway
    timed_out = 0  # doorway connections closed at their header timeout

    def open_connections(self) -> int:
        return len(self.held) + len(self.doorway)

    def serve_on(
        self,
        port: int,
        host: str,
        max_connections: int,
        header_timeout: float,
        early_answer: Callable[[bytes], bytes | None] | None = None,
    ) -> None:
        """Listen on `host`:`port`, holding at most `max_connections` connections; headers
        not complete within `header_timeout` s are closed; `early_answer` as the class."""
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self.early_answer = early_answer
        self.held = {}
        self.doorway = {}
        PeriodicCallback(self._sweep, SWEEP * 1000).start()
        for listening in bind_sockets(port, host, backlog=BACKLOG):
            # what a client may send before the service reads it: a request refused from
            # its headers (no token) costs the kernel this much, not its whole body
            listening.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
            self._accept_on(listening)

    def _accept_on(self, listening: socket.socket) -> None:
        loop = IOLoop.current()

        def ready(fd: Any, events: int) -> None:
            for _ in range(ACCEPTED_AT_ONCE):
                try:
                    connection, address = listening.accept()
                except (BlockingIOError, InterruptedError):
                    return
                except ConnectionAbortedError:
                    continue
                except OSError as error:
                    if error.errno not in OUT_OF_DESCRIPTORS:
                        raise
                    self._out_of_descriptors(loop, listening, ready)
                    return
                if self.open_connections() >= self.max_connections and not self._close_waiting(1):
                    connection.close()
                    self.refused += 1
                    continue
                connection.setblocking(False)
                self.doorway[connection] = Arrival(address, time.monotonic())
                loop.add_handler(connection, self._reading, IOLoop.READ)

        loop.add_handler(listening, ready, IOLoop.READ)

    def _reading(self, connection: socket.socket, events: int) -> None:
        """A doorway connection is readable: read its headers on; once complete, answer it
        here or hand it to tornado."""
        arrival = self.doorway.get(connection)
        if arrival is None:
            return
        try:
            part = connection.recv(HEADER_LIMIT - len(arrival.read))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            part = b""
        if not part:  # closed by the client (or reset)
            self._leave_doorway(connection, close=True)
            return
        seen = max(0, len(arrival.read) - len(END_OF_HEADERS) + 1)
        arrival.read += part
        end = arrival.read.find(END_OF_HEADERS, seen)
        if end < 0:
            if len(arrival.read) >= HEADER_LIMIT:  # far larger than any request's headers
                self._leave_doorway(connection, close=True)
            return
        self._leave_doorway(connection, close=False)
        answer = self.early_answer(bytes(arrival.read[:end])) if self.early_answer else None
        if answer is not None:
            self.answered_early += 1
            with contextlib.suppress(OSError):  # a few hundred bytes: the buffer takes them
                connection.send(answer)
            connection.close()
            return
        stream = _ReadAhead(
            connection,
            arrival.read,
            max_buffer_size=self.max_buffer_size,
            read_chunk_size=self.read_chunk_size,
        )
        self.held[stream] = True
        self.handle_stream(stream, arrival.address)

    def _leave_doorway(self, connection: socket.socket, close: bool) -> None:
        del self.doorway[connection]
        IOLoop.current().remove_handler(connection)
        if close:
            connection.close()

    def _sweep(self) -> None:
        """Close doorway connections whose headers took longer than `header_timeout`."""
        too_old = time.monotonic() - self.header_timeout
        late = [c for c, _ in takewhile(lambda e: e[1].came < too_old, self.doorway.items())]
        for connection in late:
            self._leave_doorway(connection, close=True)
        self.timed_out += len(late)

    def _out_of_descriptors(self, loop: IOLoop, listening: socket.socket, ready: Any) -> None:
        self.ran_out += 1
        freed = self._close_waiting(FREED_WHEN_OUT)
        print(
            f"check service: out of file descriptors ({self.open_connections()} connections open); "
            f"closed {freed} waiting, accepting again in {PAUSE:g} s",
            file=sys.stderr,
            flush=True,
        )
        loop.remove_handler(listening)
        loop.call_later(PAUSE, loop.add_handler, listening, ready, IOLoop.READ)

    def _close_waiting(self, count: int) -> int:
        """Close up to `count` connections waiting for headers, the longest waiting first:
        the doorway's, then those tornado keeps alive between requests."""
        entering = list(islice(self.doorway, count))
        for connection in entering:
            self._leave_doorway(connection, close=True)
        kept = list(islice((s for s, waits in self.held.items() if waits), count - len(entering)))
        for stream in kept:
            del self.held[stream]
            stream.close()
        self.evicted += len(entering) + len(kept)
        return len(entering) + len(kept)

    def start_request(
        self, server_conn: object, request_conn: httputil.HTTPConnection
    ) -> httputil.HTTPMessageDelegate:
        # a connection's first request, or its next once the one before is answered:
        # it waits for headers again, and is the newest waiting (unless closed meanwhile)
        stream = cast(HTTP1ServerConnection, server_conn).stream
        if self.held.pop(stream, None) is not None:
            self.held[stream] = True
        return _Watched(super().start_request(server_conn, request_conn), self, stream)

    def on_close(self, server_conn: object) -> None:
        self.held.pop(cast(HTTP1ServerConnection, server_conn).stream, None)
        super().on_close(server_conn)
