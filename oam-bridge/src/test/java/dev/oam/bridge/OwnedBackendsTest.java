package dev.oam.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.UnavailableModel;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** The backends a host gives a configuration are owned by its engines: the last engine to close closes them. */
class OwnedBackendsTest {
    private final List<String> closed = new ArrayList<>();

    private ModelBackend backend(String type, boolean failsToClose) {
        return new ModelBackend() {
            @Override
            public String type() {
                return type;
            }

            @Override
            public LanguageModel create(ObjectNode spec, String path) {
                return new UnavailableModel(ModelAvailability.unavailable("unknown", type));
            }

            @Override
            public boolean servesSystemModel(String location) {
                return false;
            }

            @Override
            public LanguageModel systemModel(String location, @Nullable String name) {
                throw new UnsupportedOperationException("no system model here");
            }

            @Override
            public void close() {
                synchronized (closed) {
                    closed.add(type);
                }
                if (failsToClose) {
                    throw new IllegalStateException("cannot close " + type);
                }
            }
        };
    }

    private static BridgeEngine engine(BridgeConfiguration configuration) {
        return new BridgeEngine(configuration, line -> {});
    }

    @Test
    void theLastEngineToCloseClosesEveryBackendOnceAndTheConfigurationMakesNoFurtherEngine() {
        BridgeConfiguration configuration = BridgeConfiguration.builder()
                .backends(List.of(backend("llama", false), backend("openai", false)))
                .build();
        BridgeEngine first = engine(configuration);
        BridgeEngine second = engine(configuration);

        first.close();
        first.close(); // idempotent: one engine returns its share once
        assertThat(closed).as("another engine still uses them").isEmpty();
        assertThat(configuration.ownedBackends().isClosed()).isFalse();

        second.close();
        assertThat(closed).containsExactly("llama", "openai");
        assertThat(configuration.ownedBackends().isClosed()).isTrue();
        second.close();
        assertThat(closed).as("closed once").hasSize(2);

        assertThatThrownBy(() -> engine(configuration))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed with its last engine");
    }

    @Test
    void anEngineThatFailsToBeMadeReturnsItsShare() {
        dev.oam.bridge.spi.BridgeExtension claimsPing =
                (registry, engine) -> registry.register("ping", request -> null);
        BridgeConfiguration configuration = BridgeConfiguration.builder()
                .backends(List.of(backend("llama", false)))
                .extensions(() -> claimsPing)
                .build();
        BridgeEngine other =
                engine(BridgeConfiguration.builder().backends(List.of()).build()); // unrelated

        assertThatThrownBy(() -> engine(configuration))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'ping' is registered already");
        assertThat(closed).as("it was the only engine: its share was the last").containsExactly("llama");
        other.close();
    }

    @Test
    void aBackendThatFailsToCloseDoesNotKeepTheOthersOpen() {
        BridgeConfiguration configuration = BridgeConfiguration.builder()
                .backends(List.of(backend("broken", true), backend("openai", false)))
                .build();
        engine(configuration).close();
        assertThat(closed).containsExactly("broken", "openai");
    }

    @Test
    void sharedBackendsStayTheHostsAndServeConfigurationAfterConfiguration() {
        ModelBackend llama = backend("llama", false);
        for (int i = 0; i < 3; i++) {
            BridgeConfiguration configuration =
                    BridgeConfiguration.builder().sharedBackends(List.of(llama)).build();
            assertThat(configuration.ownedBackends().isOwned()).isFalse();
            engine(configuration).close();
            assertThat(configuration.ownedBackends().isClosed()).isFalse();
        }
        assertThat(closed).as("the host closes them").isEmpty();
    }

    @Test
    void theClassPathsSharedBackendsAreNotTheEnginesToClose() {
        BridgeConfiguration configuration = BridgeConfiguration.defaults();
        assertThat(configuration.ownedBackends().list()).isEmpty();
        engine(configuration).close();
        engine(configuration).close(); // the shared backends stay usable by later engines
        assertThat(configuration.ownedBackends().isClosed()).isFalse();
    }
}
