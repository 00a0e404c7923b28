package dev.oam.ffi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.testing.ModelHostContract;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.StreamCapture;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The model backends and the system model through the C ABI: a C host process ({@code oam-ffi-host}) whose environment
 * holds {@code OAM_MODEL}, {@code OAM_MODEL_NAME} and {@code OAM_API_KEY}, read by {@code oam_bridge_create} as
 * {@code oam stdio} reads its flags and environment.
 */
class NativeModelHostIT extends ModelHostContract {
    @Override
    protected ProtocolClient connect(Map<String, String> variables) throws Exception {
        return NativeClient.start(variables);
    }

    /** {@code oam_bridge_create} returns NULL (the host exits 3) and stderr says why. */
    @Override
    protected String refusedSetup(Map<String, String> variables) throws Exception {
        ProcessBuilder builder = NativeClient.host(variables);
        builder.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Process process = builder.start();
        StreamCapture err = StreamCapture.start(process.getErrorStream(), "refused-host-err");
        byte[] out = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        err.join();
        String stderr = err.text();
        assertThat(process.exitValue()).as(stderr).isEqualTo(3);
        assertThat(out).as("nothing on stdout").isEmpty();
        assertThat(stderr).contains("OAM_MODEL");
        return stderr;
    }
}
