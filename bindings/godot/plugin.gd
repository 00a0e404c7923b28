# The editor plugin of addons/oam: enabling it (Project > Project Settings > Plugins) registers nothing more than
# the OamClient class already does; it is here so that the addon installs and enables like any other.
@tool
extends EditorPlugin


func _enter_tree() -> void:
	pass


func _exit_tree() -> void:
	pass
