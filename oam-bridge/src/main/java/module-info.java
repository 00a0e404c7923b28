/**
 * The JSON-RPC engine ({@link dev.oam.bridge.BridgeEngine}), its configuration and the extension SPI
 * ({@link dev.oam.bridge.spi.BridgeExtension}); {@code dev.oam.bridge.game} serves the game methods;
 * {@code dev.oam.bridge.client} is the typed in-process API on top ({@link dev.oam.bridge.client.Oam}).
 */
@SuppressWarnings("module") // dev.oam.cli, the module the transport package is exported to, is built later
module dev.oam.bridge {
    requires transitive dev.oam.core;
    requires transitive dev.oam.game;
    requires static transitive org.jspecify;

    exports dev.oam.bridge;
    exports dev.oam.bridge.spi;
    exports dev.oam.bridge.client;
    exports dev.oam.bridge.game;
    // What a byte-stream transport (stdio) needs beyond the API; not API.
    exports dev.oam.bridge.transport to
            dev.oam.cli;

    uses dev.oam.core.model.ModelBackend;
    uses dev.oam.bridge.spi.BridgeExtension;

    // The standard extensions are services (BridgeConfiguration.standardExtensions), so the root package names none.
    provides dev.oam.bridge.spi.BridgeExtension with
            dev.oam.bridge.game.GameExtension;
}
