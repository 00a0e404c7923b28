/** Internals shared with the other modules of oam (exported to them only); not API. */
@NullMarked
package dev.oam.core.internal;

import org.jspecify.annotations.NullMarked;
