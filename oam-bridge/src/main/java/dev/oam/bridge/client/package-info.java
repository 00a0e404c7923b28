/**
 * The typed in-process API for JVM hosts: {@link dev.oam.bridge.client.Oam} with sessions, NPCs, worlds and decisions
 * as Java objects, client tools as Java lambdas. Every call goes through the engine's JSON-RPC path, so it behaves
 * exactly as the wire does; wire errors arrive as {@link dev.oam.bridge.client.OamException} with their code. Types are
 * non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.bridge.client;

import org.jspecify.annotations.NullMarked;
