/**
 * What a model reads: chat messages rendered in the file's own template (or a known turn format), the step's prompt
 * with its tools and answer form, and the words that describe a schema.
 *
 * <p>Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.model.llama.prompt;

import org.jspecify.annotations.NullMarked;
