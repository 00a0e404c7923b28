"""Tests of open_apple_models.py (standard library unittest; run by the build: PythonBindingIT).

    python3 -m unittest -v test_open_apple_models

The bridge tests run twice, over libOpenAppleModelsFFI (OAM_LIBRARY or this repository's build) and
over an ``oam stdio`` child (OAM_STDIO_COMMAND), always with scripted models. The game methods
(npc/*, world/*, decision/*, content/generate) are not served yet; their wrappers are tested with a
fake transport that answers like the protocol says.
"""

import ast
import asyncio
import concurrent.futures
import datetime
import decimal
import enum
import gc
import io
import os
import queue
import shutil
import socket
import sys
import tempfile
import threading
import time
import unittest
import weakref
from contextlib import redirect_stderr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import open_apple_models as oam  # noqa: E402
from open_apple_models import Bridge, BridgeError, ToolError  # noqa: E402

WAIT = 60


def run(coroutine):
    """Runs a test coroutine on a fresh event loop, bounded so that a bug cannot hang the build."""
    return asyncio.run(asyncio.wait_for(coroutine, WAIT))


def scripted(*steps, fallback=None):
    model = {"type": "scripted", "steps": list(steps)}
    if fallback is not None:
        model["fallback"] = fallback
    return model


def tool_call(name, **arguments):
    return {"toolCalls": [{"name": name, "arguments": arguments}]}


class Color(enum.Enum):
    RED = "red"


class FakeArray:
    """Looks like a numpy array or scalar: the binding converts anything with tolist()/item()."""

    def __init__(self, values):
        self.values = values

    def tolist(self):
        return list(self.values)


class FakeScalar:
    def item(self):
        return 7


# ---------------------------------------------------------------------------------------------
# against a real bridge


class BridgeContract:
    """Behaviour every transport shares; subclasses say how to make the bridge."""

    stdio = False

    def make_bridge(self):
        raise NotImplementedError

    def setUp(self):
        self.bridge = self.make_bridge()
        self.addCleanup(self.bridge.close)

    def test_ping_answers_an_empty_object(self):
        self.assertEqual(run(self.bridge.ping()), {})

    def test_initialize_reports_the_server_and_capabilities(self):
        result = run(self.bridge.initialize("tests"))
        self.assertEqual(result["protocolVersion"], "1.0")
        self.assertEqual(result["server"]["name"], "open-apple-models")
        self.assertIn("session/respond", result["capabilities"]["methods"])
        self.assertEqual(self.bridge.version, result["server"]["version"])

    def test_an_unknown_method_is_method_not_found(self):
        async def main():
            with self.assertRaises(BridgeError) as caught:
                await self.bridge.request("no/such")
            return caught.exception

        error = run(main())
        self.assertEqual(error.code, -32601)
        self.assertEqual(error.name, "method_not_found")

    def test_call_blocking_needs_no_event_loop(self):
        self.assertEqual(self.bridge.call_blocking("ping"), {})
        availability = self.bridge.call_blocking("model/availability", timeout=5)
        self.assertFalse(availability["available"])
        with self.assertRaises(BridgeError) as caught:
            self.bridge.call_blocking("session/respond", {"session": "missing", "prompt": "x"})
        self.assertEqual(caught.exception.name, "session_not_found")

    def test_call_blocking_times_out_quickly(self):
        self.bridge.call_blocking("session/create", {"session": "slow", "model": scripted(
            {"text": "late", "delayMs": 3000}, {"text": "next"})})
        started = time.monotonic()
        with self.assertRaises(BridgeError) as caught:
            self.bridge.call_blocking("session/respond", {"session": "slow", "prompt": "x"}, timeout=0.2)
        self.assertLess(time.monotonic() - started, 2.0)
        self.assertEqual(caught.exception.code, -32024)
        self.assertEqual(caught.exception.name, "timeout")
        if not self.stdio:
            # Through the C ABI the timed-out turn was cancelled: the next one does not wait 3 s for it.
            started = time.monotonic()
            result = self.bridge.call_blocking("session/respond", {"session": "slow", "prompt": "x"}, timeout=10)
            self.assertEqual(result["text"], "next")
            self.assertLess(time.monotonic() - started, 2.5)

    def test_call_blocking_after_close_is_shut_down(self):
        self.bridge.close()
        with self.assertRaises(BridgeError) as caught:
            self.bridge.call_blocking("ping")
        self.assertEqual(caught.exception.name, "shut_down")

    def test_close_cancels_a_blocking_call_in_flight(self):
        async def main():
            await self.bridge.request("session/create", {"session": "w", "model": scripted(
                {"text": "never", "delayMs": 60000})})
            started = asyncio.Event()
            self.bridge.on_notification("session/event", lambda params: started.set())
            loop = asyncio.get_running_loop()
            blocked = loop.run_in_executor(None, lambda: self.bridge.call_blocking(
                "session/respond", {"session": "w", "prompt": "x", "stream": True}, timeout=None))
            await started.wait()
            closing = time.monotonic()
            self.bridge.close()
            with self.assertRaises(BridgeError) as caught:
                await blocked
            return caught.exception, time.monotonic() - closing

        error, took = run(main())
        self.assertEqual(error.name, "cancelled")
        self.assertLess(took, 2.0)

    def test_the_bridge_moves_to_a_new_loop_but_not_to_a_second_running_one(self):
        self.assertEqual(run(self.bridge.ping()), {})
        self.assertEqual(run(self.bridge.ping()), {})  # a second asyncio.run
        other = asyncio.new_event_loop()
        thread = threading.Thread(target=other.run_forever, daemon=True)
        thread.start()
        try:
            self.assertEqual(asyncio.run_coroutine_threadsafe(self.bridge.ping(), other).result(WAIT), {})
            with self.assertRaises(RuntimeError):
                run(self.bridge.ping())
        finally:
            other.call_soon_threadsafe(other.stop)
            thread.join()
            other.close()

    def test_a_tool_round_trip_with_streaming(self):
        seen = []

        @self.bridge.tool(description="Open a named gate.",
                          parameters={"type": "object", "properties": {"gate": {"type": "string"}}})
        def open_gate(args, context):
            seen.append((args, context.session, context.name, context.request_id))
            return {"opened": True}

        async def main():
            session = await self.bridge.create_session(
                instructions="You guard the gate.", tools=["open_gate"], options={"toolChoice": "required"},
                model=scripted(tool_call("open_gate", gate="north"), {"template": "Result: {toolOutput}", "chunks": 4}))
            deltas, events = [], []
            result = await session.respond("Open the north gate.", on_text=deltas.append, on_event=events.append)
            return session, result, deltas, events

        session, result, deltas, events = run(main())
        self.assertEqual(result["text"], 'Result: {"opened":true}')
        self.assertEqual("".join(deltas), result["text"])
        self.assertGreater(len(deltas), 1)
        self.assertEqual(seen, [({"gate": "north"}, session.id, "open_gate", seen[0][3])])
        self.assertTrue(str(seen[0][3]).startswith("py-"))
        types = [event["type"] for event in events]
        self.assertIn("toolCallStarted", types)
        self.assertIn("toolCallCompleted", types)
        self.assertLess(types.index("toolCallStarted"), types.index("toolCallCompleted"))
        self.assertEqual(result["toolCalls"][0]["output"], {"opened": True})

    def test_a_tool_answered_by_a_future_runs_on_the_game_thread_while_it_ticks(self):
        # A game whose tools must run on its own thread (a server tick, an engine's main thread): the handler
        # queues the work for the game's next tick and returns a concurrent.futures.Future; the game thread
        # starts the turn and keeps ticking, never blocking on it, and the bridge's event loop runs elsewhere.
        ticks = queue.Queue()
        game_thread = threading.current_thread()
        seen = {}

        @self.bridge.tool(description="Open a named gate (on the game thread).",
                          parameters={"type": "object", "properties": {"gate": {"type": "string"}}})
        def open_gate(args):
            seen["handler"] = threading.current_thread()
            done = concurrent.futures.Future()

            def work():
                seen["work"] = threading.current_thread()
                done.set_result({"opened": True, "gate": args["gate"]})
            ticks.put(work)
            return done

        loop = asyncio.new_event_loop()
        loop_thread = threading.Thread(target=loop.run_forever, name="bridge-loop", daemon=True)
        loop_thread.start()
        try:
            async def turn():
                session = await self.bridge.create_session(
                    tools=["open_gate"], model=scripted(tool_call("open_gate", gate="east"), {"template": "{toolOutput}"}))
                return await session.respond("Open the east gate.")

            future = asyncio.run_coroutine_threadsafe(turn(), loop)
            future.add_done_callback(lambda _: ticks.put(lambda: None))  # wakes the game loop when the turn ends
            ticked = 0
            while not future.done():
                ticks.get(timeout=WAIT)()
                ticked += 1
            result = future.result()
        finally:
            loop.call_soon_threadsafe(loop.stop)
            loop_thread.join(WAIT)
            self.bridge.close()
            loop.close()
        self.assertEqual(result["text"], '{"opened":true,"gate":"east"}')
        self.assertIs(seen["work"], game_thread)
        self.assertIsNot(seen["handler"], game_thread)
        self.assertGreaterEqual(ticked, 1)

    def test_a_tool_error_becomes_an_error_output_the_model_sees(self):
        @self.bridge.tool
        def open_gate(args):
            """Open the gate."""
            raise ToolError("The chain is jammed.")

        @self.bridge.tool("count")
        def failing(args):
            return 1 / 0

        async def main():
            session = await self.bridge.create_session(tools=["open_gate", "count"], model=scripted(
                {"toolCalls": [{"name": "open_gate"}, {"name": "count"}]}, {"template": "{toolOutputs}"}))
            return await session.respond("x")

        result = run(main())
        self.assertEqual(sorted(result["text"].split("\n")),
                         sorted(["Error: The chain is jammed.", "Error: division by zero"]))
        self.assertTrue(all(record["isError"] for record in result["toolCalls"]))
        self.assertEqual(self.bridge.tool_definitions(["open_gate"])[0]["description"], "Open the gate.")

    def test_a_tool_timeout_cancels_the_handler(self):
        cancelled = {}

        async def slow(args):
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled["event"].set()
                raise

        self.bridge.register_tool("slow", slow, "Never finishes.", timeout=0.2)

        async def main():
            cancelled["event"] = asyncio.Event()
            session = await self.bridge.create_session(tools=["slow"], model=scripted(
                tool_call("slow"), {"template": "{toolOutput}"}))
            result = await session.respond("x")
            await cancelled["event"].wait()  # tool/cancel reached the handler
            return result

        result = run(main())
        self.assertTrue(result["toolCalls"][0]["isError"])
        self.assertIn("timed out", result["text"])

    def test_other_sessions_run_while_one_waits_for_its_tool(self):
        release = asyncio.Event
        held = {}

        async def hold(args):
            await held["release"].wait()
            return "released"

        self.bridge.register_tool("hold", hold, "Waits until released.")

        async def main():
            held["release"] = release()
            first = await self.bridge.create_session(tools=["hold"], model=scripted(
                tool_call("hold"), {"template": "{toolOutput}"}))
            second = await self.bridge.create_session(model=scripted({"text": "second", "delayMs": 100}))
            waiting = asyncio.ensure_future(first.respond("x"))
            self.assertEqual((await second.respond("y"))["text"], "second")
            self.assertFalse(waiting.done())
            held["release"].set()
            return await waiting

        self.assertEqual(run(main())["text"], "released")

    def test_events_are_routed_to_their_own_request(self):
        async def main():
            alpha = await self.bridge.create_session(model=scripted({"text": "a1 a2 a3", "chunks": 3, "delayMs": 50}))
            beta = await self.bridge.create_session(model=scripted({"text": "b1 b2 b3", "chunks": 3, "delayMs": 50}))
            a, b = [], []
            await asyncio.gather(alpha.respond("x", on_text=a.append), beta.respond("y", on_text=b.append))
            return a, b

        a, b = run(main())
        self.assertEqual("".join(a), "a1 a2 a3")
        self.assertEqual("".join(b), "b1 b2 b3")

    def test_cancel_counts_and_the_turn_fails_cancelled(self):
        async def main():
            session = await self.bridge.create_session(model=scripted(
                {"text": "never", "delayMs": 60000}, {"error": "guardrail_violation"}))
            started = asyncio.Event()
            turn = asyncio.ensure_future(session.respond("x", on_event=lambda event: started.set()))
            await started.wait()
            self.assertEqual(await session.cancel(), 1)
            with self.assertRaises(BridgeError) as cancelled:
                await turn
            with self.assertRaises(BridgeError) as blocked:
                await session.respond("again")
            return cancelled.exception, blocked.exception

        cancelled, blocked = run(main())
        self.assertEqual((cancelled.code, cancelled.name), (-32009, "cancelled"))
        self.assertEqual((blocked.code, blocked.name), (-32002, "guardrail_violation"))

    def test_session_management(self):
        @self.bridge.tool
        def ring(args):
            """Ring the bell."""
            return "ding"

        async def main():
            session = await self.bridge.create_session(
                instructions="Be brief.", tools=[{"name": "raw_tool", "description": "A raw definition."}],
                options={"temprature": 1}, model=scripted({"text": "one"}, {"text": "two"}), session="keeper")
            self.assertEqual(session.id, "keeper")
            self.assertTrue(any("temprature" in warning for warning in session.warnings))
            await session.set_instructions("Be verbose.")
            await session.set_context_note("It is raining.")
            self.assertEqual(await session.set_tools(["ring"]), [])
            self.assertEqual((await session.respond("x"))["text"], "one")
            sessions = await self.bridge.list_sessions()
            self.assertEqual([(s["session"], s["instructions"], s["tools"], s["entries"]) for s in sessions],
                             [("keeper", "Be verbose.", ["ring"], 2)])
            await session.reset()
            self.assertEqual((await self.bridge.list_sessions())[0]["entries"], 0)
            await session.delete()
            self.assertEqual(await self.bridge.list_sessions(), [])
            with self.assertRaises(BridgeError) as caught:
                await self.bridge.session("keeper").respond("x")
            return caught.exception

        self.assertEqual(run(main()).name, "session_not_found")

    def test_a_schema_turn_returns_structured_output(self):
        async def main():
            session = await self.bridge.create_session(model=scripted({"json": {"choice": "flee", "why": "outnumbered"}}))
            return await session.respond("x", schema={"type": "object", "properties": {
                "choice": {"type": "string", "enum": ["fight", "flee"]}, "why": {"type": "string"}}},
                toolChoice="none")

        result = run(main())
        self.assertEqual(result["structured"], {"choice": "flee", "why": "outnumbered"})

    def test_transcript_round_trip_when_the_server_has_it(self):
        methods = run(self.bridge.initialize())["capabilities"]["methods"]
        if "session/transcript" not in methods:
            self.skipTest("this server has no session/transcript yet")

        async def main():
            session = await self.bridge.create_session(model=scripted({"text": "one"}))
            await session.respond("x")
            saved = await session.transcript()
            restored = await self.bridge.create_session(history=saved, model=scripted({"text": "two"}))
            await restored.respond("y")
            return [entry["entries"] for entry in await self.bridge.list_sessions()]

        self.assertEqual(run(main()), [2, 4])

    def test_close_fails_pending_requests_and_later_calls(self):
        async def main():
            session = await self.bridge.create_session(model=scripted({"text": "never", "delayMs": 60000}))
            turn = asyncio.ensure_future(session.respond("x"))
            await asyncio.sleep(0)  # the request is sent
            self.bridge.close()
            with self.assertRaises(BridgeError) as pending:
                await turn
            with self.assertRaises(BridgeError) as later:
                self.bridge.notify("ping")
            return pending.exception, later.exception

        pending, later = run(main())
        self.assertEqual(pending.name, "shut_down")
        self.assertEqual(later.name, "shut_down")
        self.bridge.close()  # idempotent

    def test_tool_results_are_converted_to_json(self):
        @self.bridge.tool
        def inventory(args):
            """What is in stock."""
            return {"items": {"iron"}, "price": decimal.Decimal("1.50"), "count": decimal.Decimal(3),
                    "day": datetime.date(2026, 12, 2), "color": Color.RED, "raw": b"ore",
                    "array": FakeArray([1, 2]), "scalar": FakeScalar(), "pairs": (x for x in "ab")}

        @self.bridge.tool
        def nothing(args):
            """Returns nothing."""

        @self.bridge.tool
        def not_a_number(args):
            """Returns NaN."""
            return float("nan")

        async def main():
            session = await self.bridge.create_session(
                tools=["inventory", "nothing", "not_a_number"],
                model=scripted({"toolCalls": [{"name": "inventory"}]}, {"toolCalls": [{"name": "nothing"}]},
                               {"toolCalls": [{"name": "not_a_number"}]}, {"text": "done"}))
            return await session.respond("x")

        records = run(main())["toolCalls"]
        self.assertEqual(records[0]["output"], {"items": ["iron"], "price": 1.5, "count": 3, "day": "2026-12-02",
                                                "color": "red", "raw": "ore", "array": [1, 2], "scalar": 7,
                                                "pairs": ["a", "b"]})
        self.assertEqual(records[1]["output"], "")
        self.assertTrue(records[2]["isError"])
        self.assertIn("JSON", records[2]["output"])

    def test_bad_params_fail_before_anything_is_pending(self):
        async def main():
            with self.assertRaises(ValueError):
                await self.bridge.request("ping", {"x": float("inf")})
            with self.assertRaises(TypeError):
                await self.bridge.request("ping", {"x": object()})
            return dict(self.bridge._pending)

        self.assertEqual(run(main()), {})

    def test_an_unknown_tool_is_answered_with_an_error(self):
        async def main():
            session = await self.bridge.create_session(
                tools=[{"name": "ghost", "description": "Nobody handles this."}],
                model=scripted(tool_call("ghost"), {"template": "{toolOutput}"}))
            return await session.respond("x")

        result = run(main())
        self.assertTrue(result["toolCalls"][0]["isError"])
        self.assertEqual(result["text"], "Error: No handler is registered for the tool 'ghost'.")

    def test_a_cancelled_turn_cancels_its_tool_handler(self):
        events = {}

        async def wait_forever(args):
            events["entered"].set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                events["cancelled"].set()
                raise

        self.bridge.register_tool("wait", wait_forever, "Waits.")

        async def main():
            events["entered"], events["cancelled"] = asyncio.Event(), asyncio.Event()
            session = await self.bridge.create_session(tools=["wait"], model=scripted(tool_call("wait")))
            turn = asyncio.ensure_future(session.respond("x"))
            await events["entered"].wait()
            await session.cancel()
            with self.assertRaises(BridgeError):
                await turn
            await events["cancelled"].wait()

        run(main())

    def test_an_unclosed_unreferenced_bridge_stays_alive(self):
        bridge = self.make_bridge()
        bridge.call_blocking("session/create", {"session": "late", "model": scripted({"text": "late", "delayMs": 200})})

        async def start(b):
            return asyncio.ensure_future(b.session("late").respond("x"))

        async def main():
            turn = await start(bridge_ref())
            gc.collect()
            self.assertIsNotNone(bridge_ref())
            return await turn

        bridge_ref = weakref.ref(bridge)
        del bridge
        gc.collect()
        self.assertIsNotNone(bridge_ref(), "the registry keeps an unclosed bridge (and its callback) alive")
        self.assertEqual(run(main())["text"], "late")
        bridge_ref().close()
        gc.collect()
        self.assertIsNone(bridge_ref(), "a closed bridge can go")


def _library_available():
    try:
        oam.load_library()
        return True
    except OSError:
        return False


@unittest.skipUnless(_library_available() or os.environ.get("OAM_REQUIRE_NATIVE"), "libOpenAppleModelsFFI is not built")
class NativeBridgeTest(BridgeContract, unittest.TestCase):
    def make_bridge(self):
        return Bridge()

    def test_the_version_is_the_library_version(self):
        self.assertEqual(self.bridge.version, oam.__version__)

    def test_settings_reach_the_library_as_json_without_environment_variables(self):
        limited = Bridge(settings={"maxSessions": 1, "scriptedModels": True, "logLevel": "warning"})
        self.addCleanup(limited.close)

        async def main():
            await limited.create_session(model="scripted")
            with self.assertRaises(BridgeError) as caught:
                await limited.create_session(model="scripted")
            return caught.exception
        self.assertEqual(run(main()).name, "session_limit")
        with redirect_stderr(io.StringIO()), self.assertRaises(RuntimeError):
            Bridge(settings={"maxSession": 1})  # misspelt: refused, the reason on stderr


@unittest.skipUnless(os.environ.get("OAM_STDIO_COMMAND"), "OAM_STDIO_COMMAND is not set")
class StdioBridgeTest(BridgeContract, unittest.TestCase):
    stdio = True

    def make_bridge(self):
        return Bridge.over_stdio()


# ---------------------------------------------------------------------------------------------
# real model backends behind the binding


GGUF = os.environ.get("OAM_TEST_GGUF")
OPENAI_URL = os.environ.get("OAM_TEST_OPENAI_URL")
HUB_URL = os.environ.get("OAM_TEST_HUB_URL")  # a loopback hub serving GGUF's bytes as owner/repo/python-tiny.gguf
HUB_NAME = "hf:owner/repo/python-tiny.gguf"
GATE = {"type": "object", "properties": {"gate": {"type": "string", "enum": ["north", "south"]}}, "required": ["gate"]}


class variables:
    """Sets environment variables while a bridge is made (the library reads them in oam_bridge_create, an
    ``oam stdio`` child inherits them), then puts the old values back."""

    def __init__(self, **values):
        self.values = values

    def __enter__(self):
        self.saved = {name: os.environ.get(name) for name in self.values}
        os.environ.update(self.values)

    def __exit__(self, *exc):
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class ModelContract:
    """The llama backend on a generated GGUF (OAM_TEST_GGUF) and the openai backend on the in-project fake
    server (OAM_TEST_OPENAI_URL, which calls open_gate when it may and then answers from the tool's result);
    PythonBindingIT provides both. A system model comes from OAM_MODEL/OAM_MODEL_NAME like for ``oam stdio``."""

    def make_bridge(self):
        raise NotImplementedError

    def bridge_with(self, **values):
        with variables(**values):
            bridge = self.make_bridge()
        self.addCleanup(bridge.close)
        return bridge

    def gate_turn(self, bridge, model=None):
        seen = []

        @bridge.tool(description="Open a named gate.", parameters=GATE)
        def open_gate(args, context):
            seen.append(args["gate"])
            return {"opened": True}

        async def main():
            session = await bridge.create_session(
                instructions="You guard the gate.", tools=["open_gate"], model=model,
                options={"toolChoice": "required", "maxToolRounds": 1, "maxResponseTokens": 8})
            return await session.respond("Open the north gate.", on_text=lambda delta: None)

        result = run(main())
        self.assertEqual(len(seen), 1)
        self.assertIn(seen[0], ("north", "south"))
        self.assertEqual(result["toolCalls"][0]["output"], {"opened": True})
        self.assertGreater(result["usage"]["inputTokens"], 0)
        return result

    def test_a_llama_session_calls_a_tool(self):
        bridge = self.bridge_with()
        self.assertIsInstance(self.gate_turn(bridge, {"type": "llama", "path": GGUF})["text"], str)

    def test_an_openai_session_calls_a_tool(self):
        bridge = self.bridge_with()
        result = self.gate_turn(bridge, {"type": "openai", "baseUrl": OPENAI_URL, "model": "fake-model"})
        self.assertEqual(result["text"], 'The gate answered: {"opened":true}')

    def test_oam_model_names_a_gguf_system_model(self):
        bridge = self.bridge_with(OAM_MODEL=GGUF, OAM_MODEL_NAME="py-warden")
        self.gate_turn(bridge)  # the default model is the system model; the turn waits for it to load
        availability = run(bridge.model_availability())
        self.assertTrue(availability["available"], availability)
        self.assertEqual(availability["variant"], "py-warden")

    def test_oam_model_names_an_openai_system_model(self):
        bridge = self.bridge_with(OAM_MODEL=OPENAI_URL, OAM_MODEL_NAME="fake-model")

        async def main():
            session = await bridge.create_session(instructions="You are a guard.")
            return await session.respond("Hello.")

        self.assertEqual(run(main())["text"], "fake-model heard: Hello.")

    def test_pull_model_reports_progress_and_the_pulled_name_then_runs(self):
        cache = tempfile.mkdtemp(prefix="oam-py-cache-")
        self.addCleanup(shutil.rmtree, cache, True)
        bridge = self.bridge_with(HF_ENDPOINT=HUB_URL, OAM_MODEL_CACHE=cache)
        progress = []

        async def main():
            with self.assertRaises(BridgeError) as uncached:
                await bridge.create_session(model={"type": "llama", "path": HUB_NAME})
            with self.assertRaises(BridgeError) as missing:
                await bridge.pull_model("hf:owner/repo/absent.gguf")
            pulled = await bridge.pull_model(HUB_NAME, on_progress=lambda done, total: progress.append((done, total)))
            return uncached.exception, missing.exception, pulled

        uncached, missing, pulled = run(main())
        self.assertEqual(uncached.code, -32602)
        self.assertIn("model/pull", uncached.message)
        self.assertEqual(missing.code, -32060)
        self.assertEqual(missing.data["reason"], "not_found")
        size = os.path.getsize(GGUF)
        self.assertEqual(pulled["bytes"], size)
        self.assertTrue(pulled["downloaded"])
        self.assertTrue(progress)
        self.assertEqual(progress[-1], (size, size))
        self.assertFalse(run(bridge.cancel_pull(HUB_NAME)))
        self.gate_turn(bridge, {"type": "llama", "path": HUB_NAME})

    def test_bad_model_files_and_a_server_that_is_down_fail_alone(self):
        bridge = self.bridge_with()
        missing = os.path.join(os.path.dirname(GGUF), "missing-%d.gguf" % os.getpid())
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]

        async def main():
            with self.assertRaises(BridgeError) as refused:
                await bridge.create_session(model={"type": "llama", "path": missing})
            down = await bridge.create_session(
                model={"type": "openai", "baseUrl": "http://127.0.0.1:%d/v1" % port, "model": "gone"})
            with self.assertRaises(BridgeError) as failed:
                await down.respond("Hello?")
            return refused.exception, failed.exception

        refused, failed = run(main())
        self.assertEqual(refused.code, -32602)
        self.assertIn(missing, refused.message)
        self.assertIn("does not exist", refused.message)
        self.assertEqual(failed.code, -32001)
        self.assertIn("127.0.0.1:%d" % port, failed.message)
        self.gate_turn(bridge, {"type": "llama", "path": GGUF})  # the bridge and its other sessions go on


@unittest.skipUnless(GGUF and OPENAI_URL and HUB_URL, "OAM_TEST_GGUF, OAM_TEST_OPENAI_URL and OAM_TEST_HUB_URL are not set (PythonBindingIT sets them)")
@unittest.skipUnless(_library_available() or os.environ.get("OAM_REQUIRE_NATIVE"), "libOpenAppleModelsFFI is not built")
class NativeModelTest(ModelContract, unittest.TestCase):
    def make_bridge(self):
        return Bridge()

    def test_a_system_model_the_library_cannot_serve_fails_the_bridge_not_the_process(self):
        missing = os.path.join(os.path.dirname(GGUF), "absent-%d.gguf" % os.getpid())
        with variables(OAM_MODEL=missing), self.assertRaises(RuntimeError) as caught:
            Bridge()  # the reason (naming OAM_MODEL and the file) is on stderr
        self.assertIn("OAM_MODEL", str(caught.exception))
        self.assertEqual(run(self.bridge_with().ping()), {})


@unittest.skipUnless(GGUF and OPENAI_URL and HUB_URL, "OAM_TEST_GGUF, OAM_TEST_OPENAI_URL and OAM_TEST_HUB_URL are not set (PythonBindingIT sets them)")
@unittest.skipUnless(os.environ.get("OAM_STDIO_COMMAND"), "OAM_STDIO_COMMAND is not set")
class StdioModelTest(ModelContract, unittest.TestCase):
    def make_bridge(self):
        return Bridge.over_stdio()


# ---------------------------------------------------------------------------------------------
# routing of the game methods, with a fake transport


class FakeTransport:
    """Answers like a bridge would, synchronously from send(); records what was sent."""

    def __init__(self, answer):
        self.answer = answer  # message -> list of messages to deliver
        self.sent = []
        self.closed = False
        self.on_line = None

    def start(self, on_line):
        self.on_line = on_line

    def deliver(self, message):
        self.on_line(oam._encode(message))

    def send(self, line):
        message = oam.loads(line)
        self.sent.append(message)
        for reply in self.answer(message) or []:
            self.deliver(reply)
        return oam.OAM_OK

    def call_blocking(self, line, timeout_ms):
        message = oam.loads(line)
        self.sent.append(message)
        return oam._encode((self.answer(message) or [])[-1])

    def close(self):
        self.closed = True


def result_for(message, result):
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


class GameWrapperTest(unittest.TestCase):
    def make(self, answer):
        transport = FakeTransport(answer)
        bridge = Bridge.with_transport(transport)
        self.addCleanup(bridge.close)
        return bridge, transport

    def test_talk_adds_up_the_line_and_routes_only_its_own_events(self):
        def answer(message):
            if message.get("method") != "npc/talk":
                return []
            rid = message["id"]

            def event(request_id, body):
                return {"jsonrpc": "2.0", "method": "npc/event",
                        "params": {"npc": "gorm", "requestId": request_id, "event": body}}

            return [event(rid, {"type": "emotion", "emotion": "proud"}),
                    event(rid, {"type": "lineDelta", "delta": "Aye"}),
                    event("someone-else", {"type": "lineDelta", "delta": "WRONG"}),
                    event(rid, {"type": "lineDelta", "delta": ", iron"}),
                    event(rid, {"type": "lineReset", "line": "Iron swords."}),
                    event(rid, {"type": "lineDelta", "delta": " Cheap."}),
                    result_for(message, {"npc": "gorm", "line": "Iron swords. Cheap.", "emotion": "proud"})]

        bridge, transport = self.make(answer)
        lines, emotions, events = [], [], []
        result = run(bridge.npc("gorm").talk("Swords?", context={"gold": 45}, on_line=lines.append,
                                             on_emotion=emotions.append, on_event=events.append))
        self.assertEqual(lines, ["Aye", "Aye, iron", "Iron swords.", "Iron swords. Cheap."])
        self.assertEqual(lines[-1], result["line"])
        self.assertEqual(emotions, ["proud"])
        self.assertEqual(len(events), 5)
        self.assertEqual(transport.sent[0]["params"], {"npc": "gorm", "line": "Swords?", "context": {"gold": 45},
                                                       "stream": True})

    def test_on_text_gives_each_reply_once_when_the_model_rewrites_it(self):
        def answer(message):
            if message.get("method") != "session/respond":
                return []
            rid = message["id"]

            def text(delta, whole, reset=False):
                return {"jsonrpc": "2.0", "method": "session/event", "params": {
                    "session": "guard", "requestId": rid,
                    "event": {"type": "text", "delta": delta, "text": whole, "isReset": reset}}}

            return [text("The gate", "The gate"), text(" is open. ", "The gate is open. "),
                    # a rewrite extending what was shown: only the rest is new
                    text("The gate is open. Go. ", "The gate is open. Go. ", True),
                    # the final text, trimmed: the whole text again, which does not extend what was shown
                    text("The gate is open. Go.", "The gate is open. Go.", True),
                    # a new attempt: everything shown is dropped
                    text("", "", True), text("Halt!", "Halt!"),
                    result_for(message, {"session": "guard", "text": "Halt!", "toolCalls": []})]

        bridge, transport = self.make(answer)
        printed, resets, events = [], [], []
        result = run(bridge.session("guard").respond("Open up.", on_text=printed.append, on_reset=resets.append,
                                                     on_event=events.append))
        self.assertEqual(printed, ["The gate", " is open. ", "Go. ", "Halt!"])
        self.assertEqual(resets, ["The gate is open. Go.", ""])
        self.assertEqual(len(events), 6)
        self.assertTrue(transport.sent[0]["params"]["stream"])
        # what the README's example prints (deltas appended, no on_reset): the reply once, never twice
        printed.clear()
        run(bridge.session("guard").respond("Open up.", on_text=printed.append))
        self.assertEqual("".join(printed), "The gate is open. Go. Halt!")
        self.assertEqual(result["text"], "Halt!")

    def test_world_changes_go_to_their_subscription_from_the_first_one(self):
        def changed(subscription, path, old, new):
            return {"jsonrpc": "2.0", "method": "world/changed", "params": {
                "world": "village", "subscription": subscription, "path": path, "oldValue": old, "newValue": new}}

        def answer(message):
            method = message.get("method")
            if method == "world/subscribe":
                # The first change arrives right behind the response: no gap in which it could be lost.
                return [result_for(message, {"subscription": "sub1", "world": "village", "path": "player"}),
                        changed("sub1", "player.gold", 60, 45), changed("sub2", "quests.main", None, "open")]
            if method == "world/set":
                return [changed("sub1", "player.gold", 45, 30),
                        result_for(message, {"world": "village", "path": "player.gold", "version": 3})]
            if method == "world/unsubscribe":
                return [result_for(message, {"subscription": "sub1", "unsubscribed": True}),
                        changed("sub1", "player.gold", 30, 0)]
            return [result_for(message, {})]

        bridge, _ = self.make(answer)
        changes = []

        async def main():
            world = bridge.world("village")
            subscription = await world.subscribe(lambda params: changes.append(
                (params["path"], params.get("oldValue"), params.get("newValue"))), path="player")
            self.assertEqual(subscription, "sub1")
            self.assertEqual(await world.set("player.gold", 30), 3)
            await world.unsubscribe(subscription)
            await asyncio.sleep(0)

        run(main())
        self.assertEqual(changes, [("player.gold", 60, 45), ("player.gold", 45, 30)])

    def test_npc_tool_calls_see_the_npc(self):
        contexts = []
        talks = []

        def answer(message):
            if message.get("method") == "npc/talk":
                talks.append(message["id"])
                return [{"jsonrpc": "2.0", "id": "t-1", "method": "tool/call", "params": {
                    "npc": "gorm", "requestId": message["id"],
                    "call": {"id": "call_1", "name": "check_inventory", "arguments": {"item": "sword"}}}}]
            if message.get("id") == "t-1":  # the tool's reply: the turn ends
                return [result_for({"id": talks[0]}, {"npc": "gorm", "line": "Three."})]
            return []

        bridge, transport = self.make(answer)

        @bridge.tool
        def check_inventory(args, context):
            """Count an item."""
            contexts.append((args, context.npc, context.session, context.call_id))
            return {"stock": 3}

        self.assertEqual(run(bridge.npc("gorm").talk("How many?"))["line"], "Three.")
        self.assertEqual(contexts, [({"item": "sword"}, "gorm", None, "call_1")])
        self.assertEqual(transport.sent[-1], {"jsonrpc": "2.0", "id": "t-1", "result": {"output": {"stock": 3}}})

    def test_tool_cancel_cancels_the_handler_and_nothing_is_sent(self):
        def answer(message):
            if message.get("method") == "npc/talk":
                return [{"jsonrpc": "2.0", "id": "t-9", "method": "tool/call", "params": {
                    "npc": "gorm", "requestId": message["id"], "call": {"id": "c", "name": "slow", "arguments": {}}}}]
            return []

        bridge, transport = self.make(answer)
        events = {}

        @bridge.tool
        async def slow(args):
            """Slow."""
            events["entered"].set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                events["cancelled"].set()
                raise

        async def main():
            events["entered"], events["cancelled"] = asyncio.Event(), asyncio.Event()
            talk = asyncio.ensure_future(bridge.npc("gorm").talk("x"))
            await events["entered"].wait()
            transport.deliver({"jsonrpc": "2.0", "method": "tool/cancel", "params": {"npc": "gorm", "id": "t-9"}})
            await events["cancelled"].wait()
            talk.cancel()

        run(main())
        self.assertFalse(any(message.get("id") == "t-9" for message in transport.sent))

    def test_requests_from_the_bridge_other_than_tool_call_are_refused(self):
        bridge, transport = self.make(lambda message: [])

        async def main():
            bridge._bind_loop()
            transport.deliver({"jsonrpc": "2.0", "id": "x-1", "method": "client/whatever", "params": {}})
            await asyncio.sleep(0)

        run(main())
        self.assertEqual(transport.sent[-1]["error"]["code"], -32601)
        self.assertEqual(transport.sent[-1]["id"], "x-1")

    def test_an_unregistered_tool_gets_a_json_rpc_error_as_in_the_csharp_binding(self):
        bridge, transport = self.make(lambda message: [])

        async def main():
            bridge._bind_loop()
            transport.deliver({"jsonrpc": "2.0", "id": "t-3", "method": "tool/call", "params": {
                "session": "s", "call": {"id": "c", "name": "ghost", "arguments": {}}}})
            await asyncio.sleep(0)

        run(main())
        self.assertEqual(transport.sent[-1], {"jsonrpc": "2.0", "id": "t-3", "error": {
            "code": -32601, "message": "No handler is registered for the tool 'ghost'.",
            "data": {"code": "method_not_found", "method": "tool/call"}}})

    def test_messages_that_are_not_strict_json_are_dropped(self):
        bridge, transport = self.make(lambda message: [])
        heard = []
        bridge.on_notification("x/y", heard.append)

        async def main():
            bridge._bind_loop()
            stderr = io.StringIO()
            with redirect_stderr(stderr):
                transport.on_line(b'{"jsonrpc":"2.0","method":"x/y","params":{"v":NaN}}')
            transport.on_line(b'{"jsonrpc":"2.0","method":"x/y","params":{"v":1}}')
            await asyncio.sleep(0)
            return stderr.getvalue()

        self.assertIn("not strict JSON", run(main()))
        self.assertEqual(heard, [{"v": 1}])

    def test_a_failing_handler_does_not_stop_the_others(self):
        bridge, transport = self.make(lambda message: [])
        heard = []
        bridge.on_notification("x/y", lambda params: 1 / 0)
        bridge.on_notification("x/y", heard.append)

        async def main():
            bridge._bind_loop()
            with redirect_stderr(io.StringIO()):
                transport.deliver({"jsonrpc": "2.0", "method": "x/y", "params": {"v": 1}})
                await asyncio.sleep(0)

        run(main())
        self.assertEqual(heard, [{"v": 1}])

    def test_every_wrapper_sends_the_documented_request(self):
        results = {
            "npc/create": {"npc": "gorm", "tools": ["check"], "warnings": []},
            "npc/restore": {"npc": "gorm", "tools": [], "warnings": []},
            "npc/bark": {"npc": "gorm", "line": "Rain again."},
            "npc/state": {"npc": "gorm", "state": {"version": 1}},
            "npc/update": {"npc": "gorm", "warnings": []},
            "npc/cancel": {"npc": "gorm", "cancelled": 2},
            "npc/list": {"npcs": [{"npc": "gorm", "turnCount": 1, "world": "village"}]},
            "decision/decide": {"optionID": "flee", "confidence": 75, "isFallback": False},
            "decision/decideMany": {"results": [{"optionID": "x"}, {"optionID": "y", "isFallback": True}]},
            "content/generate": {"content": {"name": "Rusty Sword"}},
            "world/create": {"world": "village", "version": 0},
            "world/get": {"world": "village", "path": "player.gold", "value": None, "exists": False, "version": 0},
            "world/set": {"world": "village", "path": "player.gold", "version": 1},
            "world/merge": {"world": "village", "path": "", "version": 2},
            "world/remove": {"world": "village", "path": "player.gold", "removed": True, "oldValue": 60, "version": 3},
            "world/snapshot": {"world": "village", "state": {"player": {}}, "version": 3},
            "world/list": {"worlds": [{"world": "village"}]},
        }
        bridge, transport = self.make(lambda message: [result_for(message, results.get(message["method"], {}))])
        bridge.register_tool("check", lambda args: "ok", "Check something.", timeout=5)

        async def main():
            npc = await bridge.create_npc({"name": "Gorm"}, tools=["check"], world="village",
                                          options={"replyFormat": "text"}, memory={"relationship": 10},
                                          model="scripted", npc="gorm")
            self.assertEqual((npc.id, npc.tools), ("gorm", ["check"]))
            await bridge.restore_npc({"version": 1}, tools=None)
            self.assertEqual(await npc.bark("raining"), "Rain again.")
            self.assertEqual(await npc.state(settle=False), {"version": 1})
            self.assertEqual(await npc.update(memory={"relationship": 30, "summary": None}), [])
            await npc.reset(clear_memory=True)
            self.assertEqual(await npc.cancel(), 2)
            await npc.delete()
            self.assertEqual((await bridge.list_npcs())[0]["turnCount"], 1)
            decision = await bridge.decide("A wolf appears.", ["fight", {"id": "flee", "description": "Run"}],
                                           actor="gorm", context={"hp": 3}, tool_choice="none", fallback="flee",
                                           temperature=0)
            self.assertEqual(decision["optionID"], "flee")
            many = await bridge.decide_many([{"situation": "a", "options": ["x"]}], max_concurrency=2, model="scripted")
            self.assertTrue(many[1]["isFallback"])
            self.assertEqual(await bridge.generate("A sword.", {"type": "object"}, instructions="Short."),
                             {"name": "Rusty Sword"})
            world = await bridge.create_world({"player": {"gold": 60}}, world="village")
            self.assertIsNone(await world.get("player.gold"))
            self.assertEqual(await world.get("player.gold", default=0), 0)
            self.assertEqual(await world.set("player.gold", 45), 1)
            self.assertEqual(await world.merge({"quests": {"main": "open"}}), 2)
            self.assertEqual(await world.remove("player.gold"), 60)
            self.assertEqual(await world.snapshot(), {"player": {}})
            await world.delete()
            self.assertEqual((await bridge.list_worlds())[0]["world"], "village")

        run(main())
        sent = [(message["method"], message.get("params")) for message in transport.sent]
        check = {"name": "check", "description": "Check something.",
                 "parameters": {"type": "object", "properties": {}}, "execution": "client", "timeoutSeconds": 5}
        self.assertEqual(sent, [
            ("npc/create", {"npc": "gorm", "persona": {"name": "Gorm"}, "tools": [check], "world": "village",
                            "options": {"replyFormat": "text"}, "memory": {"relationship": 10}, "model": "scripted"}),
            ("npc/restore", {"state": {"version": 1}, "tools": None}),
            ("npc/bark", {"npc": "gorm", "situation": "raining"}),
            ("npc/state", {"npc": "gorm", "settle": False}),
            ("npc/update", {"npc": "gorm", "memory": {"relationship": 30, "summary": None}}),
            ("npc/reset", {"npc": "gorm", "clearMemory": True}),
            ("npc/cancel", {"npc": "gorm"}),
            ("npc/delete", {"npc": "gorm"}),
            ("npc/list", None),
            ("decision/decide", {"situation": "A wolf appears.",
                                 "options": ["fight", {"id": "flee", "description": "Run"}], "actor": "gorm",
                                 "context": {"hp": 3}, "toolChoice": "none", "fallbackOptionID": "flee",
                                 "temperature": 0}),
            ("decision/decideMany", {"requests": [{"situation": "a", "options": ["x"]}], "maxConcurrency": 2,
                                     "model": "scripted"}),
            ("content/generate", {"prompt": "A sword.", "schema": {"type": "object"}, "instructions": "Short."}),
            ("world/create", {"world": "village", "state": {"player": {"gold": 60}}}),
            ("world/get", {"world": "village", "path": "player.gold"}),
            ("world/get", {"world": "village", "path": "player.gold"}),
            ("world/set", {"world": "village", "path": "player.gold", "value": 45}),
            ("world/merge", {"world": "village", "path": "", "patch": {"quests": {"main": "open"}}}),
            ("world/remove", {"world": "village", "path": "player.gold"}),
            ("world/snapshot", {"world": "village"}),
            ("world/delete", {"world": "village"}),
            ("world/list", None),
        ])

    def test_close_closes_the_transport_once(self):
        bridge, transport = self.make(lambda message: [])
        bridge.close()
        bridge.close()
        self.assertTrue(transport.closed)
        with self.assertRaises(BridgeError):
            bridge.send_message({"jsonrpc": "2.0", "method": "ping"})


class JsonTest(unittest.TestCase):
    def test_strict_both_ways(self):
        with self.assertRaises(ValueError):
            oam.dumps({"x": float("nan")})
        with self.assertRaises(ValueError):
            oam.loads('{"x": Infinity}')
        self.assertEqual(oam.dumps({"a": decimal.Decimal("2.0")}), '{"a":2}')
        self.assertEqual(oam._encode({"s": "\ud800"}), b'{"s":"\\ud800"}')


class SyntaxTest(unittest.TestCase):
    def test_the_files_parse_as_python_3_9(self):
        for name in ("open_apple_models.py", "example.py", "test_open_apple_models.py"):
            with open(os.path.join(HERE, name), encoding="utf-8") as source:
                ast.parse(source.read(), filename=name, feature_version=(3, 9))


if __name__ == "__main__":
    unittest.main()
