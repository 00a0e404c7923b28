package dev.oam.model.llama.prompt;

/** One message of a chat prompt; {@code role} is {@code system}, {@code user}, {@code assistant} or {@code tool}. */
public record ChatMessage(String role, String content) {}
