"""A tour of open_apple_models.py against the scripted model (runs anywhere, also in CI).

    python3 example.py            # libOpenAppleModelsFFI in this process
    python3 example.py --stdio    # an `oam stdio` child (OAM_STDIO_COMMAND or bin/oam)

With a real model configured on the bridge, replace the `model=scripted(...)` arguments by nothing
(the system model) and the answers become the model's own.
"""

import asyncio
import sys

from open_apple_models import Bridge, BridgeError, ToolError


def scripted(*steps):
    return {"type": "scripted", "steps": list(steps)}


STOCK = {"iron sword": 3, "steel shield": 0}


async def main(bridge: Bridge) -> None:
    # 1. The handshake, and a blocking call (any thread may make one; no event loop needed).
    hello = await bridge.initialize("example.py")
    model = hello["model"]
    print("server %s %s; model available: %s%s" % (
        hello["server"]["name"], hello["server"]["version"], model["available"],
        "" if model["available"] else " (%s)" % model.get("reason")))
    print("context size: %s" % model.get("contextSize", "unknown (no system model)"))
    print("blocking ping: %s" % bridge.call_blocking("ping", timeout=5))
    methods = hello["capabilities"]["methods"]

    # 2. A client tool the model must call first (a forced named tool), with streaming.
    @bridge.tool(description="Look up how many of an item the shop has. Returns the count.",
                 parameters={"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]})
    def check_inventory(args):
        item = args["item"]
        if item not in STOCK:
            raise ToolError("No item called %r." % item)
        return {"item": item, "stock": STOCK[item]}

    shop = await bridge.create_session(
        instructions="You run a smithy. Check the stock before you answer.",
        tools=["check_inventory"], options={"toolChoice": {"tool": "check_inventory"}},
        model=scripted({"toolCalls": [{"name": "check_inventory", "arguments": {"item": "iron sword"}}]},
                       {"template": "We have this: {toolOutput}", "chunks": 3},
                       {"toolCalls": [{"name": "check_inventory", "arguments": {"item": "mithril"}}]},
                       {"template": "Sorry. {toolOutput}"}))
    print("shop: ", end="")
    turn = await shop.respond("Do you sell iron swords?", on_text=lambda delta: print(delta, end="", flush=True))
    print()
    print("  tool calls: %s" % [(record["call"]["name"], record["output"]) for record in turn["toolCalls"]])

    # 3. A tool error: the model sees it and recovers.
    turn = await shop.respond("And mithril?")
    print("shop: %s" % turn["text"])

    # 4. A decision shaped by a JSON Schema, without tools.
    guard = await bridge.create_session(
        instructions="You are a cautious guard.",
        model=scripted({"json": {"reasoning": "Three wolves is too many.", "choice": "retreat"}}))
    decision = await guard.respond(
        "Three wolves approach. What do you do?", toolChoice="none",
        schema={"type": "object", "properties": {
            "reasoning": {"type": "string"}, "choice": {"type": "string", "enum": ["fight", "retreat", "call_help"]}},
            "required": ["reasoning", "choice"]})
    print("guard decides: %s" % decision["structured"])

    # 5. Save a conversation and resume it in a new session.
    if "session/transcript" in methods:
        saved = await shop.transcript()
        resumed = await bridge.create_session(history=saved, model=scripted({"text": "Welcome back."}))
        print("resumed: %s" % (await resumed.respond("Hello again."))["text"])
    else:
        print("(this bridge has no session/transcript yet: skipping save and resume)")

    # 6. The game methods: a world, an NPC grounded in it, a decision and a save.
    if "npc/create" in methods:
        village = await bridge.create_world({"player": {"gold": 60}}, world="village")
        gorm = await bridge.create_npc(
            {"name": "Gorm", "role": "the village blacksmith"}, tools=["check_inventory"], world="village",
            options={"groundingTool": "check_inventory", "worldReadable": [], "worldContextPaths": ["player"],
                     "playerOptionCount": 1},
            model=scripted({"toolCalls": [{"name": "check_inventory", "arguments": {"item": "iron sword"}}]},
                           {"json": {"emotion": "proud", "line": "Three swords, finest in the valley.",
                                     "player_options": ["Buy one"], "ends_conversation": False}}),
            npc="gorm")
        reply = await gorm.talk("Any swords?", on_line=lambda line: print("\r  Gorm: " + line, end="", flush=True))
        print("\n  emotion: %s" % reply["emotion"])
        choice = await bridge.decide("A thief grabs a sword.", ["chase", "shout"], actor="gorm", fallback="shout",
                                     model=scripted({"json": {"reasoning": "Too slow.", "choice": "shout",
                                                              "confidence": 80}}))
        print("  Gorm decides: %s" % choice["optionID"])
        print("  save: %d keys" % len(await gorm.state()))
        print("  gold: %s" % await village.get("player.gold"))
    else:
        print("(this bridge has no game methods yet: skipping the NPC, world and decision)")

    # 7. Errors are typed: BridgeError carries the code and its stable name.
    try:
        await bridge.session("nobody").respond("Hello?")
    except BridgeError as error:
        print("error: %s %s" % (error.code, error.name))


if __name__ == "__main__":
    bridge = Bridge.over_stdio() if "--stdio" in sys.argv[1:] else Bridge()
    with bridge:
        asyncio.run(main(bridge))
    print("done")
