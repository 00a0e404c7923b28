package dev.oam.ffi;

import dev.oam.testing.ModelPullContract;
import dev.oam.testing.ProtocolClient;
import java.util.Map;

/** model/pull through the C ABI, its cache and hub from the host process's environment. */
class NativeModelPullIT extends ModelPullContract {
    @Override
    protected ProtocolClient connect(Map<String, String> variables) throws Exception {
        return NativeClient.start(variables);
    }
}
