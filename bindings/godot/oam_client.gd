# oam_client.gd: a small Godot 4 client of the oam bridge over `oam stdio` (one JSON-RPC message per line).
#
# Add it as a node (or `OamClient.new()` + add_child), call start(), then `await request(...)`. The bridge's
# lines are read on a thread and handed to the main thread in _process, where responses complete their
# requests, events reach the callable given with their request, and tool/calls run the registered tools.
# Written for Godot 4.2+ (OS.execute_with_pipe). The build parses it with gdtoolkit (bin/release --check) but cannot
# run it: Godot 4 is not packaged where the build runs (see README.md).
class_name OamClient
extends Node

## What to run: `oam stdio`, or for instance "java" with ["-jar", "/path/to/oam.jar", "stdio"].
@export var command: String = "oam"
@export var arguments: PackedStringArray = PackedStringArray(["stdio"])

## Every notification (after the routed handlers), on the main thread.
signal notification_received(method: String, params: Dictionary)

## A request in flight; `completed` carries the whole response ({"result": …} or {"error": …}).
class Pending:
	signal completed(response: Dictionary)

var _pipe: FileAccess
var _pid := -1
var _reader: Thread
var _mutex := Mutex.new()
var _inbox: Array[String] = []
var _next_id := 0
var _pending := {}   # "gd-<n>" -> Pending
var _on_event := {}  # "gd-<n>" -> Callable(event: Dictionary)
var _tools := {}     # tool name -> Callable(args: Dictionary, params: Dictionary) -> Variant
var _deferred := {}  # tool name -> true for tools registered with register_deferred_tool
var _replies := {}   # str(tool/call id) -> ToolReply not answered yet


## A tool/call answered later (register_deferred_tool): call ok() or error() once, from the main thread, when
## the work is done. If the bridge no longer wants the answer (tool/cancel: a timeout, a cancelled turn),
## `cancelled` turns true and the `cancel` signal fires; ok() and error() then send nothing and return false.
class ToolReply:
	signal cancel(reason: String)
	var id
	var arguments: Dictionary
	var params: Dictionary
	var cancelled := false
	var answered := false
	var _client

	func ok(output = "") -> bool:
		return _answer({"output": "" if output == null else output})

	func error(message: String) -> bool:
		return _answer({"output": message, "isError": true})

	func _answer(result: Dictionary) -> bool:
		if answered or cancelled:
			return false
		answered = true
		_client._replies.erase(str(id))
		_client._send({"jsonrpc": "2.0", "id": id, "result": result})
		return true


## Starts the bridge process. False (and an error in the log) if it cannot be started.
func start() -> bool:
	var process := OS.execute_with_pipe(command, arguments)
	if process.is_empty():
		push_error("oam: could not start %s %s" % [command, " ".join(arguments)])
		return false
	_pipe = process["stdio"]
	_pid = process["pid"]
	_reader = Thread.new()
	_reader.start(_read_lines)
	return true


func _read_lines() -> void:
	# get_line blocks until a line arrives; the loop ends when the process closes its stdout.
	while _pipe.get_error() == OK:
		var line := _pipe.get_line()
		if line.strip_edges().is_empty():
			continue
		_mutex.lock()
		_inbox.append(line)
		_mutex.unlock()


func _process(_delta: float) -> void:
	_mutex.lock()
	var lines := _inbox
	_inbox = []
	_mutex.unlock()
	for line in lines:
		var message = JSON.parse_string(line)
		if typeof(message) == TYPE_DICTIONARY:
			_dispatch(message)
		else:
			push_warning("oam: dropped a line that is not a JSON object: %s" % line)


## Registers a tool: handler(args, params) returns the output (a String, Dictionary, Array, number or bool).
## Its definition for "tools" params is tool_definition(tool_name, description, parameters).
func register_tool(tool_name: String, handler: Callable) -> void:
	_tools[tool_name] = handler
	_deferred.erase(tool_name)


## Registers a tool answered later: handler(reply: ToolReply) starts the work (an animation, a timer, a path to
## walk) and returns; the game calls reply.ok(output) or reply.error(message) when it is done, on a later frame.
## The turn waits for it meanwhile (up to the bridge's tool timeout), and the game keeps running.
func register_deferred_tool(tool_name: String, handler: Callable) -> void:
	_tools[tool_name] = handler
	_deferred[tool_name] = true


static func tool_definition(tool_name: String, description: String, parameters: Dictionary = {"type": "object", "properties": {}}) -> Dictionary:
	return {"name": tool_name, "description": description, "parameters": parameters, "execution": "client"}


## Sends a request and returns its response: `var response = await oam.request("ping")`.
## on_event receives the event of every notification naming this request (streamed text, tool calls, …).
func request(method: String, params: Dictionary = {}, on_event: Callable = Callable()) -> Dictionary:
	_next_id += 1
	var id := "gd-%d" % _next_id
	var pending := Pending.new()
	_pending[id] = pending
	if on_event.is_valid():
		_on_event[id] = on_event
	_send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	var response: Dictionary = await pending.completed
	return response


func notify(method: String, params: Dictionary = {}) -> void:
	_send({"jsonrpc": "2.0", "method": method, "params": params})


func _send(message: Dictionary) -> void:
	if _pipe == null or not _pipe.is_open():
		push_error("oam: the bridge is not running")
		return
	_pipe.store_string(JSON.stringify(message) + "\n")
	_pipe.flush()


func _dispatch(message: Dictionary) -> void:
	var method = message.get("method")
	if method != null and message.has("id"):
		_on_request(method, message)
	elif method != null:
		var params: Dictionary = message.get("params", {})
		if method == "tool/cancel":
			var key := str(params.get("id"))
			if _replies.has(key):
				var reply: ToolReply = _replies[key]
				_replies.erase(key)
				reply.cancelled = true
				reply.cancel.emit(str(params.get("reason", "")))
		var request_id = params.get("requestId")
		if typeof(request_id) == TYPE_STRING and _on_event.has(request_id):
			_on_event[request_id].call(params.get("event", params))
		notification_received.emit(method, params)
	elif message.has("id"):
		var id = message["id"]
		if typeof(id) == TYPE_STRING and _pending.has(id):
			var pending: Pending = _pending[id]
			_pending.erase(id)
			_on_event.erase(id)
			pending.completed.emit(message)


func _on_request(method: String, message: Dictionary) -> void:
	var params: Dictionary = message.get("params", {})
	var call_info: Dictionary = params.get("call", {})
	var tool_name = call_info.get("name", "")
	if method != "tool/call" or not _tools.has(tool_name):
		# The same answer as the Python and C# bindings: a JSON-RPC error the model sees as "Error: …".
		var text := ("No handler is registered for the tool '%s'." % tool_name) if method == "tool/call" \
			else ("The client does not handle '%s'." % method)
		_send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": text,
			"data": {"code": "method_not_found", "method": method}}})
		return
	if _deferred.has(tool_name):
		var reply := ToolReply.new()
		reply.id = message["id"]
		reply.arguments = call_info.get("arguments", {})
		reply.params = params
		reply._client = self
		_replies[str(reply.id)] = reply
		_tools[tool_name].call(reply)
		return
	var output = _tools[tool_name].call(call_info.get("arguments", {}), params)
	_send({"jsonrpc": "2.0", "id": message["id"], "result": {"output": "" if output == null else output}})


func _exit_tree() -> void:
	for reply in _replies.values():
		reply.cancelled = true
	_replies.clear()
	if _pipe == null:
		return
	# `oam stdio` answers shutdown, then exits; its stdout closes and the reader thread ends.
	_send({"jsonrpc": "2.0", "id": "gd-shutdown", "method": "shutdown"})
	_reader.wait_to_finish()
	_pipe.close()
	_pipe = null
