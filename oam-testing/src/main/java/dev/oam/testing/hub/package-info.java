/** A loopback model hub (Hugging Face's resolve/redirect/CDN protocol and PyPI's JSON API) for download tests. */
@NullMarked
package dev.oam.testing.hub;

import org.jspecify.annotations.NullMarked;
