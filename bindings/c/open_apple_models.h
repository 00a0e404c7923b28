/*
 * open_apple_models.h: the C ABI of the oam bridge (libOpenAppleModelsFFI).
 *
 * The bridge speaks JSON-RPC 2.0 (the open-apple-models bridge protocol v1.0, see
 * docs/PROTOCOL.md). Through this ABI every message is one UTF-8 JSON object without a
 * trailing newline: you hand lines in with oam_bridge_send(), and the bridge hands its lines out
 * through the callback you pass to oam_bridge_create(). Requests from the bridge (tool/call with
 * ids "t-<n>") are answered by sending a response line back with oam_bridge_send().
 *
 * This edition runs the bridge on a Java virtual machine (JDK 21 or newer) inside your process:
 * the first oam_bridge_create() starts one through the JNI invocation API, or joins the one your
 * process already runs. bindings/README.md says how the JVM and the engine's jar are found.
 *
 * MEMORY
 *   - Every string you pass in is only borrowed for the duration of the call; the library copies
 *     what it keeps.
 *   - The line given to your callback belongs to the library and is valid only until the
 *     callback returns. Copy it if you need it later.
 *   - The string returned by oam_call_blocking() is yours: release it with oam_string_free(),
 *     never with free() (the library and your program may use different allocators, e.g. two C
 *     runtimes on Windows).
 *   - user_data is never read by the library, only handed back to the callback. Whatever it
 *     points to must stay valid until oam_bridge_destroy() has returned.
 *
 * THREADING
 *   - Every function may be called from any thread. A thread the JVM does not know yet is
 *     attached to it on its first call (as a daemon) and detached when the thread ends.
 *   - oam_bridge_send() never waits for model work: it parses the line, does the
 *     order-sensitive part (a session is created, a turn takes its place in its session's
 *     queue) and returns. Lines are handled in the order the calls happen; long turns then run
 *     concurrently.
 *   - Each bridge has one thread of its own that runs your callback, one line at a time, never
 *     re-entered and never from two threads at once. For any request, the notifications and
 *     tool/call requests it causes reach the callback before its response.
 *   - The callback may call oam_bridge_send() (for instance to answer a tool/call at once). It
 *     must not call oam_call_blocking(): the answer could only be delivered by the very thread
 *     that is waiting for it. The library detects this and returns an error response instead.
 *   - Keep the callback short. While it runs, no other line of that bridge is delivered. Game
 *     engines with a main thread usually copy the line into a queue and drain it each frame.
 *
 * LIFETIME
 *   - oam_bridge_destroy() cancels every turn, queued operation and outstanding tool/call of the
 *     bridge, waits for a callback that is running at that moment to return, and frees the
 *     bridge. No callback happens after it returns. Requests still in flight are not answered.
 *   - Calling oam_bridge_destroy() from inside the callback of the same bridge is allowed; it
 *     must be the last thing the callback does with that bridge. The cancelled work is then
 *     wound down in the background.
 *   - Because destroy waits for a running callback, do not call it while holding a lock that
 *     your callback takes. Destroying a bridge twice is undefined behaviour.
 *   - Using a bridge in another thread (send, call_blocking) while it is being destroyed is
 *     undefined behaviour. Bindings count their in-flight native calls, send a
 *     {"jsonrpc":"2.0","method":"shutdown"} notification (which makes waiting calls return),
 *     wait for the count to reach zero, and only then destroy.
 *   - Several bridges may exist at once; they share the JVM and are otherwise independent.
 *   - The JVM is never shut down: it lives until the process exits.
 *
 * DIAGNOSTICS
 *   OAM_BRIDGE_LOG=debug|info|warning|error|off (default warning) sets how much the library and
 *   the engine write to stderr. Nothing is ever written to stdout, so a host may use stdout for
 *   its own protocol. Failures to find or start the JVM are always explained on stderr unless
 *   the level is off. The level is read by each oam_bridge_create() and is process-wide.
 */
#ifndef OPEN_APPLE_MODELS_H
#define OPEN_APPLE_MODELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  if defined(OAM_BUILDING_LIBRARY)
#    define OAM_API __declspec(dllexport)
#  else
#    define OAM_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define OAM_API __attribute__((visibility("default")))
#else
#  define OAM_API
#endif

/* Return codes of oam_bridge_send(). */
#define OAM_OK 0
/* bridge or line is NULL. */
#define OAM_ERROR_INVALID_ARGUMENT (-1)
/* The line is not well-formed UTF-8; nothing was sent. (Well-formed UTF-8 that is not valid JSON
 * is accepted and answered asynchronously with a -32700 parse error, like on stdio.) */
#define OAM_ERROR_INVALID_UTF8 (-2)
/* This edition only: the library could not reach the JVM (e.g. the thread could not be
 * attached); the reason is on stderr and nothing was sent. */
#define OAM_ERROR_INTERNAL (-3)

/* An opaque bridge. */
typedef struct oam_bridge oam_bridge;

/*
 * Receives one message from the bridge: a NUL-terminated UTF-8 JSON object without a newline,
 * valid only until the callback returns. Runs on the bridge's own thread (see THREADING).
 */
typedef void (*oam_callback)(const char *message, void *user_data);

/*
 * Creates a bridge whose messages go to callback. The first call in a process starts (or joins)
 * the JVM, which takes a moment; later calls are quick. Settings come from the environment at
 * the time of the call: OAM_BRIDGE_LOG, and this edition's OAM_BRIDGE_MAX_SESSIONS (default 64),
 * OAM_BRIDGE_TOOL_TIMEOUT (seconds, default 120, 0 = wait forever),
 * OAM_BRIDGE_SCRIPTED_MODELS (0 refuses scripted models), and the system model like
 * `oam stdio --model`: OAM_MODEL (a .gguf file, a model name of the model cache or an http(s)://.../v1
 * URL), OAM_MODEL_NAME and OAM_API_KEY; the model cache and model/pull's sources: OAM_MODEL_CACHE,
 * HF_ENDPOINT, HF_TOKEN, OAM_PYPI_ENDPOINT (see bindings/README.md).
 *
 * Returns NULL when callback is NULL or the bridge cannot start (no suitable JVM, the engine's
 * jar is missing, a bad setting, a system model that cannot be served); the reason is written to
 * stderr. It never aborts the process.
 */
OAM_API oam_bridge *oam_bridge_create(oam_callback callback, void *user_data);

/*
 * oam_bridge_create() with settings given as one JSON object instead of environment variables (a .NET host's
 * Environment.SetEnvironmentVariable does not reach the C runtime's getenv on Windows). Every member is
 * optional; one that is absent or null falls back to its environment variable:
 *
 *   "classPath"          string   OAM_CLASSPATH: the engine's jar(s), separated by ':' (';' on Windows)
 *   "javaHome"           string   OAM_JAVA_HOME: the Java 21+ to start
 *   "jvmOptions"         string   OAM_JVM_OPTIONS: extra JVM options, separated by white space
 *   "logLevel"           string   OAM_BRIDGE_LOG: debug, info, warning, error or off
 *   "model"              string   OAM_MODEL: the system model, a .gguf path or an http(s)://.../v1 URL
 *   "modelName"          string   OAM_MODEL_NAME
 *   "apiKey"             string   OAM_API_KEY
 *   "maxSessions"        number   OAM_BRIDGE_MAX_SESSIONS
 *   "toolTimeoutSeconds" number   OAM_BRIDGE_TOOL_TIMEOUT (0 = wait forever)
 *   "scriptedModels"     boolean  OAM_BRIDGE_SCRIPTED_MODELS
 *
 * for example {"javaHome": "C:\\Game\\jre", "classPath": "C:\\Game\\oam\\oam.jar", "logLevel": "info"}.
 * classPath, javaHome and jvmOptions matter only to the create that starts the JVM (the first of the process).
 * settings_json NULL is {}. Anything but a flat object of these names with values of these types (an unknown
 * name, a wrong type, a second copy of a name, text after the object) is refused: NULL is returned and the
 * reason written to stderr, before any JVM is started.
 */
OAM_API oam_bridge *oam_bridge_create_with_settings(const char *settings_json, oam_callback callback, void *user_data);

/*
 * Hands one message (a JSON object, no trailing newline needed) to the bridge. Returns OAM_OK
 * once the line has been accepted; its answer, if any, arrives through the callback. Never waits
 * for model work.
 */
OAM_API int oam_bridge_send(oam_bridge *bridge, const char *line);

/*
 * Cancels everything the bridge is doing, waits for a running callback to return, and frees the
 * bridge. NULL is ignored. Allowed from inside the bridge's own callback (as its last call).
 */
OAM_API void oam_bridge_destroy(oam_bridge *bridge);

/* The library's version, e.g. "0.1.0". A static string: do not free it. Starts no JVM. */
OAM_API const char *oam_version(void);

/*
 * Sends one request and waits for its response, which is returned as a JSON line (release it
 * with oam_string_free) instead of going to the callback. "jsonrpc" and "id" may be left out;
 * without an id the bridge uses a private "local-…" id. Events and tool/calls the request causes
 * still go to the callback, tagged with that id as requestId, so do not use it for turns that
 * call client tools unless another thread answers them.
 *
 * timeout_ms <= 0 waits as long as it takes. When the time runs out, the request is cancelled and
 * a -32024 error response (data.code "timeout") is returned. Malformed input gets the same error
 * response the bridge would send for it (-32700, -32600). Returns NULL only when bridge or json
 * is NULL, or memory ran out. Must not be called from inside the callback.
 */
OAM_API char *oam_call_blocking(oam_bridge *bridge, const char *json, int32_t timeout_ms);

/* Releases a string returned by oam_call_blocking(). NULL is ignored. */
OAM_API void oam_string_free(char *string);

#ifdef __cplusplus
}
#endif

#endif /* OPEN_APPLE_MODELS_H */
