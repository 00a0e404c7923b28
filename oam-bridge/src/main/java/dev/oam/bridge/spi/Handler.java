package dev.oam.bridge.spi;

/**
 * Handles one method. Runs on the dispatcher, one request at a time in arrival order: validate and do the
 * order-sensitive part here, and return deferred or queued work for anything slow.
 */
@FunctionalInterface
public interface Handler {
    Reply handle(BridgeRequest request) throws Exception;
}
