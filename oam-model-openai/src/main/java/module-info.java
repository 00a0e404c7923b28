/**
 * The OpenAI-compatible Chat Completions backend: serves {@code "type": "openai"} and {@code --model http(s)://…}, and
 * {@code "type": "llama-server"}, a user-installed llama-server the bridge starts and supervises.
 */
module dev.oam.model.openai {
    requires dev.oam.core;
    requires java.net.http;
    requires static org.jspecify;

    provides dev.oam.core.model.ModelBackend with
            dev.oam.model.openai.OpenAIBackend,
            dev.oam.model.openai.LlamaServerBackend;
}
