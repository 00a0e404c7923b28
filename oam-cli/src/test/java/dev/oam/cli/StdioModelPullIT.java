package dev.oam.cli;

import dev.oam.testing.ModelPullContract;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.StdioClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** model/pull over a real {@code bin/oam stdio}, its cache and hub from its environment. */
class StdioModelPullIT extends ModelPullContract {
    @Override
    protected ProtocolClient connect(Map<String, String> variables) throws Exception {
        List<String> command = new ArrayList<>(List.of("env", "-u", "OAM_MODEL"));
        variables.forEach((name, value) -> command.add(name + "=" + value));
        command.add(Transports.launcher().toString());
        command.add("stdio");
        return StdioClient.start(command);
    }
}
