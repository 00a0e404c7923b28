"""The official `openai` Python package against `oam serve` on a real model (Gemma 3 270M, SmolLM2-135M-Instruct).

Run by oam-server's GemmaServerIT and SmolLM2ServerIT with the server's base URL, API key and the model's title
(context 2048, greedy decoding). The model's wording is its own: the checks assert the protocol and that what it
produced is valid (tool arguments and json_schema content against their schemas), never the words. Prints one line
per check and a closing 'N passed, N failed' line; exits non-zero when a check failed.
"""
import json
import sys
from typing import Literal

import openai
import pydantic
from openai import OpenAI

BASE, KEY = sys.argv[1], sys.argv[2]
MODEL = sys.argv[3] if len(sys.argv) > 3 else "the served model"
client = OpenAI(base_url=BASE, api_key=KEY, max_retries=0)
GATES = ["north", "south"]
OPEN_GATE = {"type": "function", "function": {
    "name": "open_gate", "description": "Open one gate of the town wall.",
    "parameters": {"type": "object", "properties": {"gate": {"type": "string", "enum": GATES}},
                   "required": ["gate"], "additionalProperties": False}}}
GREEDY = {"model": "system", "temperature": 0}
results = []


def check(name):
    def run(fn):
        try:
            fn()
            results.append((name, None))
        except Exception as e:  # noqa: BLE001 - every failure is reported, none stops the others
            results.append((name, f"{type(e).__name__}: {e}"))
    return run


def valid_open_gate(arguments):
    """open_gate's schema: an object with exactly `gate`, one of the enum."""
    value = json.loads(arguments)
    assert isinstance(value, dict) and list(value) == ["gate"], arguments
    assert value["gate"] in GATES, arguments


@check("plain chat")
def _():
    r = client.chat.completions.create(**GREEDY, max_tokens=16, messages=[
        {"role": "system", "content": "You are Mira, the innkeeper."}, {"role": "user", "content": "Hello!"}])
    choice = r.choices[0]
    assert choice.finish_reason in ("stop", "length"), choice
    assert choice.message.content and choice.message.content.strip(), choice.message
    assert not choice.message.tool_calls, choice.message
    assert 1 <= r.usage.completion_tokens <= 16, r.usage
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens, r.usage


@check("tool round trip (required)")
def _():
    messages = [{"role": "user", "content": "Please open the north gate for the caravan."}]
    r = client.chat.completions.create(**GREEDY, max_tokens=16, messages=messages, tools=[OPEN_GATE],
                                       tool_choice="required")
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    assert choice.message.tool_calls, choice.message
    for call in choice.message.tool_calls:
        assert call.id.startswith("call_") and len(call.id) == 29, call.id
        assert call.function.name == "open_gate", call
        valid_open_gate(call.function.arguments)
    messages.append(choice.message.model_dump(exclude_none=True))
    for call in choice.message.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"opened": true}'})
    r = client.chat.completions.create(**GREEDY, max_tokens=24, messages=messages, tools=[OPEN_GATE],
                                       tool_choice="none")
    answer = r.choices[0]
    assert answer.finish_reason in ("stop", "length"), answer
    assert answer.message.content and answer.message.content.strip(), answer.message
    assert not answer.message.tool_calls, answer.message


@check("streaming tool-call deltas (named tool)")
def _():
    calls, finish = {}, None
    stream = client.chat.completions.create(**GREEDY, max_tokens=16, stream=True, tools=[OPEN_GATE],
                                            tool_choice={"type": "function", "function": {"name": "open_gate"}},
                                            messages=[{"role": "user", "content": "The south gate, quickly!"}])
    for chunk in stream:
        for c in chunk.choices:
            for d in c.delta.tool_calls or []:
                entry = calls.setdefault(d.index, {"id": None, "name": None, "arguments": ""})
                entry["id"] = d.id or entry["id"]
                if d.function:
                    entry["name"] = d.function.name or entry["name"]
                    entry["arguments"] += d.function.arguments or ""
            finish = c.finish_reason or finish
    assert finish == "tool_calls", finish
    assert sorted(calls) == list(range(len(calls))) and calls, calls
    for entry in calls.values():
        assert entry["id"].startswith("call_") and entry["name"] == "open_gate", entry
        valid_open_gate(entry["arguments"])


@check("streaming text with usage")
def _():
    pieces, usage = [], None
    stream = client.chat.completions.create(**GREEDY, max_tokens=16, stream=True,
                                            stream_options={"include_usage": True},
                                            messages=[{"role": "user", "content": "Tell me about the road north."}])
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for c in chunk.choices:
            if c.delta.content:
                pieces.append(c.delta.content)
    assert len(pieces) > 1, pieces
    assert usage is not None and 1 <= usage.completion_tokens <= 16, usage


class GateOrder(pydantic.BaseModel):
    gate: Literal["north", "south"]
    open: bool


@check("json_schema")
def _():
    r = client.chat.completions.parse(**GREEDY, max_tokens=48, response_format=GateOrder,
                                      messages=[{"role": "user", "content": "Open the north gate."}])
    choice = r.choices[0]
    assert choice.finish_reason == "stop", choice
    # The SDK validated the content against the model class; check the raw text too.
    assert isinstance(choice.message.parsed, GateOrder), choice.message
    assert set(json.loads(choice.message.content)) == {"gate", "open"}, choice.message.content


@check("bad key")
def _():
    bad = OpenAI(base_url=BASE, api_key="wrong", max_retries=0)
    try:
        bad.chat.completions.create(**GREEDY, max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    except openai.AuthenticationError as e:
        assert e.status_code == 401 and e.code == "invalid_api_key", e.body
    else:
        raise AssertionError("a wrong key was accepted")


@check("unknown model")
def _():
    try:
        client.chat.completions.create(model="gpt-9", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    except openai.NotFoundError as e:
        assert e.status_code == 404 and e.code == "model_not_found" and e.param == "model", e.body
    else:
        raise AssertionError("an unknown model was served")


@check("context too long")
def _():
    try:
        client.chat.completions.create(**GREEDY, max_tokens=8, messages=[
            {"role": "user", "content": "The tavern by the river serves stew and bread. " * 300}])
    except openai.BadRequestError as e:
        assert e.status_code == 400 and e.code == "context_length_exceeded", e.body
    else:
        raise AssertionError("an over-long prompt was served")


failed = [(n, e) for n, e in results if e]
for name, error in results:
    print(("ok    " if error is None else "FAIL  ") + name + ("" if error is None else ": " + error))
print(f"python openai {openai.__version__} on {MODEL}: {len(results) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
