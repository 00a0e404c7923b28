/**
 * The contract suites and the parts they are composed of, one topic each: a transport's test class extends a contract
 * ({@link dev.oam.testing.contract.ProtocolContract}, {@link dev.oam.testing.contract.NpcContract}, ...), which
 * implements these parts over one {@link dev.oam.testing.contract.ContractFixture}
 * ({@link dev.oam.testing.contract.ContractSupport}). The parts use the clients of {@code dev.oam.testing}, never the
 * other way round. Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.testing.contract;

import org.jspecify.annotations.NullMarked;
