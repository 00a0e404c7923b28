# example.gd: the first exchange of bindings/c/example.c, in Godot: a guard rings a bell through a tool call.
# Attach to any node; the scripted model makes it run without a real model.
extends Node

func _ready() -> void:
	var oam := OamClient.new()
	add_child(oam)
	if not oam.start():
		return
	var hello := await oam.request("initialize", {"client": {"name": "godot", "version": "0.1.0"}, "protocolVersion": "1.0"})
	print("server: ", hello["result"]["server"])
	oam.register_tool("ring_bell", func(args, _params): return {"rang": true, "times": int(args.get("times", 1))})
	var bell := OamClient.tool_definition("ring_bell", "Ring the bell.",
		{"type": "object", "properties": {"times": {"type": "integer", "minimum": 1, "maximum": 12}}, "required": ["times"]})
	await oam.request("session/create", {"session": "bell", "instructions": "You ring the bell when asked.",
		"tools": [bell], "options": {"toolChoice": "required"},
		"model": {"type": "scripted", "steps": [
			{"toolCalls": [{"name": "ring_bell", "arguments": {"times": 3}}]},
			{"template": "I rang it: {toolOutput}", "chunks": 3}]}})
	var on_event := func(event: Dictionary) -> void:
		if event.get("type") == "text":
			print("delta: ", event.get("delta"))
	var turn := await oam.request("session/respond", {"session": "bell", "prompt": "Ring the bell three times.", "stream": true}, on_event)
	print("answer: ", turn["result"]["text"])
