"""The official `openai` Python package against `oam serve` on the scripted model.

Run by oam-server's OpenAIPythonClientTest with the server's base URL and API key; the server's script
(in that test) matches the order of the checks below. Prints one line per check and a closing
'N passed, N failed' line; exits non-zero when a check failed.
"""
import json
import sys

import openai
import pydantic
from openai import OpenAI

BASE, KEY = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=BASE, api_key=KEY, max_retries=0)
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
results = []


def check(name):
    def run(fn):
        try:
            fn()
            results.append((name, None))
        except Exception as e:  # noqa: BLE001 - every failure is reported, none stops the others
            results.append((name, f"{type(e).__name__}: {e}"))
    return run


@check("plain chat")
def _():
    r = client.chat.completions.create(model="system", messages=[
        {"role": "system", "content": "You are Mira."}, {"role": "user", "content": "Hello!"}])
    assert r.choices[0].message.content == "Hello from oam", r
    assert r.choices[0].finish_reason == "stop"
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens > 0


@check("tool round trip")
def _():
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    r = client.chat.completions.create(model="system", messages=messages, tools=[WEATHER])
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    call = choice.message.tool_calls[0]
    assert call.id.startswith("call_") and len(call.id) == 29, call.id
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny, 21 C"})
    r = client.chat.completions.create(model="system", messages=messages, tools=[WEATHER])
    assert r.choices[0].message.content == "It is sunny, 21 C in Paris.", r.choices[0].message


@check("streaming tool-call deltas")
def _():
    calls, finish = {}, None
    stream = client.chat.completions.create(model="system", stream=True, tools=[WEATHER],
                                            messages=[{"role": "user", "content": "Oslo and Bergen?"}])
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
    assert sorted(calls) == [0, 1], calls
    assert [json.loads(calls[i]["arguments"])["city"] for i in (0, 1)] == ["Oslo", "Bergen"], calls
    assert all(calls[i]["id"].startswith("call_") for i in (0, 1))


@check("streaming text with usage")
def _():
    pieces, usage = [], None
    stream = client.chat.completions.create(model="system", stream=True, stream_options={"include_usage": True},
                                            messages=[{"role": "user", "content": "Tell me"}])
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for c in chunk.choices:
            if c.delta.content:
                pieces.append(c.delta.content)
    assert len(pieces) > 1, pieces
    assert "".join(pieces) == "The road north is long and cold", pieces
    assert usage is not None and usage.completion_tokens > 0


class Order(pydantic.BaseModel):
    dish: str
    quantity: int


@check("json_schema")
def _():
    r = client.chat.completions.parse(model="system", response_format=Order,
                                      messages=[{"role": "user", "content": "Two stews"}])
    order = r.choices[0].message.parsed
    assert order == Order(dish="stew", quantity=2), r.choices[0].message


@check("bad key")
def _():
    bad = OpenAI(base_url=BASE, api_key="wrong", max_retries=0)
    try:
        bad.chat.completions.create(model="system", messages=[{"role": "user", "content": "hi"}])
    except openai.AuthenticationError as e:
        assert e.status_code == 401 and e.code == "invalid_api_key", e.body
    else:
        raise AssertionError("a wrong key was accepted")


@check("unknown model")
def _():
    try:
        client.chat.completions.create(model="gpt-9", messages=[{"role": "user", "content": "hi"}])
    except openai.NotFoundError as e:
        assert e.code == "model_not_found" and e.param == "model", e.body
    else:
        raise AssertionError("an unknown model was served")


@check("context too long")
def _():
    try:
        client.chat.completions.create(model="system", messages=[{"role": "user", "content": "tavern " * 40000}])
    except openai.BadRequestError as e:
        assert e.code == "context_length_exceeded", e.body
    else:
        raise AssertionError("an over-long prompt was served")


@check("models list")
def _():
    ids = [m.id for m in client.models.list()]
    assert ids == ["system", "gpt-4o-mini"], ids
    assert client.models.retrieve("gpt-4o-mini").id == "gpt-4o-mini"


failed = [(n, e) for n, e in results if e]
for name, error in results:
    print(("ok    " if error is None else "FAIL  ") + name + ("" if error is None else ": " + error))
print(f"python openai {openai.__version__}: {len(results) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
