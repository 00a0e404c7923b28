package dev.oam.core.model;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** Creates models for one {@code "model": {"type": …}} value. */
@FunctionalInterface
public interface ModelProvider {
    /**
     * @param spec the whole model object
     * @param path the parameter's path for error messages
     * @throws ModelParameterException (usually {@code -32602}) naming the bad field
     */
    LanguageModel create(ObjectNode spec, String path) throws ModelParameterException;
}
