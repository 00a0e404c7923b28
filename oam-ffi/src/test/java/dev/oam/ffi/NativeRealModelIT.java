package dev.oam.ffi;

import dev.oam.testing.ProtocolClient;
import dev.oam.testing.RealModel;
import dev.oam.testing.RealModelContract;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/**
 * The real-model suite through the C ABI: libOpenAppleModelsFFI in a C host process, Gemma 3 270M as the library's
 * system model ({@code OAM_MODEL}). On one model only, to keep bin/test's time on 2 cores: the whole suite runs on
 * every real model over stdio (oam-cli's StdioGemmaIT, StdioSmolLM2IT), and the C ABI drives SmolLM2 in the C#
 * binding's RealModelTests (CSharpBindingIT).
 */
@Tag("real-model")
class NativeRealModelIT extends RealModelContract {
    private NativeClient host;

    NativeRealModelIT() {
        super(RealModel.GEMMA);
    }

    @Override
    protected ProtocolClient connect(Path model) throws Exception {
        host = NativeClient.start(Map.of(
                "OAM_MODEL",
                model.toString(),
                "OAM_LLAMA_THREADS",
                "1",
                "OAM_LLAMA_THREADS_BATCH",
                "2",
                "OAM_LLAMA_CONTEXT",
                "2048"));
        return host;
    }

    @Override
    protected String stderr() {
        return host == null ? "" : host.stderr();
    }
}
