package dev.oam.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code bin/oam} as a child process with an environment, a standard input and its two output streams captured
 * separately (through files, so neither can fill up and block the child).
 */
final class CliRun {
    record Result(int exit, String out, String err) {
        JsonNode json() throws IOException {
            return Json.parse(out);
        }

        List<JsonNode> lines() throws IOException {
            List<JsonNode> nodes = new ArrayList<>();
            for (String line : out.split("\n")) {
                if (!line.isBlank()) {
                    nodes.add(Json.parse(line));
                }
            }
            return nodes;
        }

        JsonNode errJson() throws IOException {
            return Json.parse(err.strip());
        }

        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
        }
    }

    private final Path dir;
    private final Map<String, String> env = new LinkedHashMap<>();
    private String stdin = "";
    private Path cwd;

    CliRun(Path dir) {
        this.dir = dir;
        this.cwd = dir;
    }

    CliRun env(String name, String value) {
        env.put(name, value);
        return this;
    }

    CliRun script(String json) {
        return env("OAM_SCRIPT", json);
    }

    CliRun stdin(String text) {
        this.stdin = text;
        return this;
    }

    Result run(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Transports.launcher().toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(cwd.toFile());
        builder.environment().remove("OAM_SCRIPT");
        builder.environment().remove("OAM_MODEL");
        builder.environment().remove("NO_COLOR");
        builder.environment().putAll(env);
        Path in = Files.createTempFile(dir, "in-", ".txt");
        Path out = Files.createTempFile(dir, "out-", ".txt");
        Path err = Files.createTempFile(dir, "err-", ".txt");
        Files.writeString(in, stdin);
        builder.redirectInput(in.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile());
        Process process = builder.start();
        if (!process.waitFor(170, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(
                    "oam " + String.join(" ", args) + " did not finish; stderr so far:\n" + Files.readString(err));
        }
        return new Result(
                process.exitValue(),
                Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    static File file(Path path) {
        return path.toFile();
    }
}
