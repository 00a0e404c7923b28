/**
 * Models named by where they come from ({@code hf:OWNER/REPO/FILE.gguf}, {@code OWNER/REPO:QUANT},
 * {@code pypi:PROJECT}), the one cache folder they are downloaded into, and the verified, resumable download itself
 * ({@link dev.oam.core.model.pull.ModelCache#pull}). It lives in oam-core because every host resolves names the same
 * way: the command line ({@code oam pull}, {@code --model}), the bridge ({@code model/pull}, {@code {"type": "llama",
 * "path": NAME}}) and the C library's settings all end in {@link dev.oam.core.model.pull.ModelCache}. Only the JDK's
 * HTTP client is used.
 */
@NullMarked
package dev.oam.core.model.pull;

import org.jspecify.annotations.NullMarked;
