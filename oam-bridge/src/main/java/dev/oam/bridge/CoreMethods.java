package dev.oam.bridge;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;

/** {@code initialize}, {@code ping}, {@code model/availability} and {@code shutdown}. */
final class CoreMethods {
    private CoreMethods() {}

    static void register(MethodRegistry.Builder registry, BridgeEngine engine) {
        registry.register(Methods.INITIALIZE, request -> {
            Params params = request.params();
            String version = params.optionalString("protocolVersion");
            if (version != null && !majorOf(version).equals(majorOf(BridgeEngine.PROTOCOL_VERSION))) {
                throw BridgeException.invalidParams("Parameter 'protocolVersion' asks for protocol " + version
                        + ", but this bridge speaks " + BridgeEngine.PROTOCOL_VERSION + ".");
            }
            if (params.get("client") != null && !params.get("client").isObject()) {
                throw params.mistyped("client", "an object");
            }
            ObjectNode result = Json.object();
            result.put("protocolVersion", BridgeEngine.PROTOCOL_VERSION);
            ObjectNode server = result.putObject("server");
            server.put("name", BridgeEngine.SERVER_NAME);
            server.put("version", BridgeEngine.VERSION);
            result.set("capabilities", engine.capabilities());
            result.set("model", Coding.availability(engine.systemAvailability()));
            return Reply.result(result);
        });
        registry.register(Methods.PING, request -> Reply.result(Json.object()));
        registry.register(Methods.MODEL_AVAILABILITY, request -> Reply.result(Coding.availability(engine.systemAvailability())));
        registry.register(Methods.SHUTDOWN, request -> {
            engine.beginShutdown(request);
            return Reply.pending();
        });
    }

    private static String majorOf(String version) {
        int dot = version.indexOf('.');
        return (dot < 0 ? version : version.substring(0, dot)).strip();
    }
}
