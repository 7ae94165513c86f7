"""The check service's HTTP server: tornado's, holding a bounded number of connections and
accepting them through a loop that outlives running out of file descriptors.

At most `max_connections` are open at once, a number kept `RESERVE` descriptors under the
process's file limit (`connection_cap`). A connection still waiting for a request's
headers (idle, or sending them slowly) holds no learner's check: when a new one arrives
at the cap, the one that has waited longest is closed to make room; if every connection
is in a request, the new one is closed instead. Should accepting fail for want of
descriptors all the same (EMFILE, ENFILE), the oldest waiting connections are closed and
the listening socket is left unwatched for `PAUSE` seconds, where tornado's own loop
would be woken for it again and again, spinning. Headers (and idleness between
requests) are timed by tornado's `idle_connection_timeout`, bodies by `body_timeout`.
"""

from __future__ import annotations

import errno
import resource
import socket
import sys
from itertools import islice
from typing import Any, cast

from tornado import httputil
from tornado.http1connection import HTTP1ServerConnection
from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop
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


def connection_cap(wanted: int, kept_open: int) -> int:
    """Connections the service may hold: `wanted`, fewer if the soft file limit less
    `RESERVE` and the `kept_open` descriptors it needs besides (judges' channels) is less."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return max(1, wanted)
    return max(1, min(wanted, soft - RESERVE - kept_open))


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

    max_connections = 1000
    # each open connection's stream -> whether it waits for a request's headers, oldest
    # first (entered as accepted: tornado starts serving it only on the loop's next turn)
    held: dict[IOStream, bool]
    evicted = 0  # waiting connections closed to make room
    refused = 0  # new connections closed: every open one was in a request
    ran_out = 0  # times accepting found no descriptor

    def open_connections(self) -> int:
        return len(self.held)

    def serve_on(self, port: int, host: str, max_connections: int) -> None:
        """Listen on `host`:`port`, holding at most `max_connections` connections."""
        self.max_connections = max_connections
        self.held = {}
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
                if len(self.held) >= self.max_connections and not self._close_waiting(1):
                    connection.close()
                    self.refused += 1
                    continue
                stream = IOStream(
                    connection,
                    max_buffer_size=self.max_buffer_size,
                    read_chunk_size=self.read_chunk_size,
                )
                self.held[stream] = True
                self.handle_stream(stream, address)

        loop.add_handler(listening, ready, IOLoop.READ)

    def _out_of_descriptors(self, loop: IOLoop, listening: socket.socket, ready: Any) -> None:
        self.ran_out += 1
        freed = self._close_waiting(FREED_WHEN_OUT)
        print(
            f"check service: out of file descriptors ({len(self.held)} connections open); "
            f"closed {freed} waiting, accepting again in {PAUSE:g} s",
            file=sys.stderr,
            flush=True,
        )
        loop.remove_handler(listening)
        loop.call_later(PAUSE, loop.add_handler, listening, ready, IOLoop.READ)

    def _close_waiting(self, count: int) -> int:
        """Close up to `count` connections waiting for headers, the longest waiting first."""
        chosen = list(islice((s for s, waits in self.held.items() if waits), count))
        for stream in chosen:
            del self.held[stream]
            stream.close()
        self.evicted += len(chosen)
        return len(chosen)

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
