package dev.oam.model.openai;

import dev.oam.testing.openai.FakeOpenAIServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The program behind the fake {@code llama-server} binaries of {@link LlamaServerBackendTest} (a shell script called
 * llama-server that runs this class on the test class path). Arguments: the behaviour, a folder for its traces, then
 * llama-server's own arguments. It answers {@code --version} as llama.cpp does, writes each start's pid and arguments
 * to {@code starts} in the folder, and then:
 *
 * <ul>
 *   <li>{@code exit}: prints a load error and exits with status 3;
 *   <li>{@code architecture}: prints llama.cpp's "unknown model architecture" error and exits with status 1;
 *   <li>{@code hang}: never listens;
 *   <li>{@code serve}: an OpenAI-compatible server with {@code /health} on {@code --port}, answering every turn;
 *   <li>{@code die-once}: the same, but the first start halts (no answer) when its first chat request arrives.
 * </ul>
 */
public final class FakeLlamaServer {
    private FakeLlamaServer() {}

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        Path traces = Path.of(args[1]);
        List<String> rest = List.of(args).subList(2, args.length);
        if (rest.contains("--version")) {
            System.err.println("version: 4242 (fake0042)");
            System.err.println("built with the test suite for Java");
            return;
        }
        int starts;
        synchronized (FakeLlamaServer.class) {
            Path log = traces.resolve("starts");
            Files.writeString(
                    log,
                    ProcessHandle.current().pid() + " " + String.join(" ", rest) + "\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
            starts = (int) Files.readAllLines(log).stream()
                    .filter(line -> !line.isBlank())
                    .count();
        }
        System.out.println("main: loading model");
        switch (mode) {
            case "exit" -> {
                System.out.println("llama_model_load: error loading model: the fake cannot load anything");
                System.exit(3);
            }
            case "architecture" -> {
                System.out.println("llama_model_load: error loading model: error loading model architecture: "
                        + "unknown model architecture: 'qwen9'");
                System.exit(1);
            }
            case "hang" -> new CountDownLatch(1).await();
            case "serve", "die-once" -> serve(rest, mode.equals("die-once") && starts == 1, starts);
            default -> throw new IllegalArgumentException(mode);
        }
    }

    private static void serve(List<String> args, boolean dieOnTurn, int start)
            throws IOException, InterruptedException {
        int port = Integer.parseInt(args.get(args.indexOf("--port") + 1));
        String alias = args.get(args.indexOf("--alias") + 1);
        FakeOpenAIServer server = FakeOpenAIServer.startOn(port)
                .models("llamacpp", alias)
                .otherwise(request -> {
                    if (dieOnTurn && request.path().endsWith("/chat/completions")) {
                        System.out.println("the fake dies mid-turn");
                        Runtime.getRuntime().halt(1);
                    }
                    return FakeOpenAIServer.text("Hello from start " + start + ".");
                });
        System.out.println("main: server is listening on http://127.0.0.1:" + port);
        new CountDownLatch(1).await();
        server.close();
    }
}
