"""A real HTTP server on 127.0.0.1 that misbehaves on purpose, for fault tests.

Each POST gets the reply its ``answer(body)`` function returns: a status, a body, a content
type and an optional delay (a hang, bounded by ``MAX_DELAY``). The server runs in a daemon
thread, counts the requests it served, and stops when the ``with`` block ends.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_DELAY = 10.0


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: str = ""
    content_type: str = "application/json"
    delay: float = 0.0


def chat_ok(text: str = "Hello") -> Reply:
    payload = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop", "logprobs": None}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return Reply(body=json.dumps(payload))


class ScriptedServer:
    """``with ScriptedServer(answer) as server: ... server.url ... server.requests``."""

    def __init__(self, answer: Callable[[dict[str, Any], int], Reply]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests.append(body)
                    index = len(outer.requests) - 1
                reply = outer.answer(body, index)
                if reply.delay:
                    time.sleep(min(reply.delay, MAX_DELAY))
                data = reply.body.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
