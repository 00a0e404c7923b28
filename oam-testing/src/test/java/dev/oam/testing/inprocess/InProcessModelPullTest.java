package dev.oam.testing.inprocess;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.model.pull.ModelCache;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.ModelPullContract;
import dev.oam.testing.ProtocolClient;
import java.util.Map;

/** model/pull against the in-process engine, its cache from the variables a host would have. */
class InProcessModelPullTest extends ModelPullContract {
    @Override
    protected ProtocolClient connect(Map<String, String> variables) {
        return InMemoryClient.connect(
                BridgeConfiguration.builder().modelCache(ModelCache.fromEnvironment(variables::get)));
    }
}
