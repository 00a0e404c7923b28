/**
 * The parts the contract suites are composed of, one topic each: a transport's test class extends a contract of
 * {@code dev.oam.testing} (for example {@code ProtocolContract}), which implements these parts over one
 * {@link dev.oam.testing.contract.ContractFixture}. Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.testing.contract;

import org.jspecify.annotations.NullMarked;
