package dev.oam.bridge.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.core.json.Json;
import org.junit.jupiter.api.Test;

class MethodRegistryTest {
    private static final Handler ONE = request -> Reply.result(Json.object().put("n", 1));
    private static final Handler TWO = request -> Reply.result(Json.object().put("n", 2));

    @Test
    void aMethodRegisteredTwiceIsRefused() {
        MethodRegistry.Builder builder = MethodRegistry.builder().register("quest/narrate", ONE);

        assertThatThrownBy(() -> builder.register("quest/narrate", TWO))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'quest/narrate' is registered already");
    }

    @Test
    void overrideReplacesARegisteredHandlerOnly() {
        MethodRegistry registry = MethodRegistry.builder()
                .register("quest/narrate", ONE)
                .override("quest/narrate", TWO)
                .build();
        assertThat(registry.handler("quest/narrate")).isSameAs(TWO);

        assertThatThrownBy(() -> MethodRegistry.builder().override("quest/narrate", TWO))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not registered");
    }

    @Test
    void anExtensionClaimingABuiltInMethodIsRefusedUnlessItOverridesIt() {
        BridgeExtension claiming = (registry, engine) -> registry.register("ping", ONE);
        assertThatThrownBy(() -> new BridgeEngine(
                        BridgeConfiguration.builder().extensions(() -> claiming).build(), line -> {}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'ping'");

        BridgeExtension overriding = (registry, engine) -> registry.override("ping", ONE);
        new BridgeEngine(
                        BridgeConfiguration.builder()
                                .extensions(() -> overriding)
                                .build(),
                        line -> {})
                .close();
    }
}
