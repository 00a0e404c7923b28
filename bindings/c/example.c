/*
 * example.c: a guard at the bell tower, driven through the C ABI.
 *
 * It creates a bridge, asks for the model's availability with oam_call_blocking(), creates a
 * session with one client tool (ring_bell) whose first step must call it, starts a streamed turn,
 * answers the tool/call from the callback, prints every message and waits for the turn's
 * response. The session uses the scripted model, so it runs anywhere; pass --live to use the
 * bridge's system model instead.
 *
 * Build (Linux; the library and oam.jar in ../../oam-ffi/target/native):
 *   cc -std=c11 -D_GNU_SOURCE -I. example.c -L../../oam-ffi/target/native -lOpenAppleModelsFFI \
 *      -Wl,-rpath,../../oam-ffi/target/native -lpthread -o example && ./example
 *
 * The string matching below keeps the example short. A real host parses each line with a JSON
 * library and routes it by "id", "method" and params.requestId.
 */
#include "open_apple_models.h"

#include <stdio.h>
#include <string.h>

#if defined(_WIN32)
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h>
typedef CRITICAL_SECTION host_mutex;
typedef CONDITION_VARIABLE host_cond;
#  define mutex_init(m) InitializeCriticalSection(m)
#  define mutex_lock(m) EnterCriticalSection(m)
#  define mutex_unlock(m) LeaveCriticalSection(m)
#  define cond_init(c) InitializeConditionVariable(c)
#  define cond_wait(c, m) SleepConditionVariableCS((c), (m), INFINITE)
#  define cond_signal(c) WakeAllConditionVariable(c)
#else
#  include <pthread.h>
typedef pthread_mutex_t host_mutex;
typedef pthread_cond_t host_cond;
#  define mutex_init(m) pthread_mutex_init((m), NULL)
#  define mutex_lock(m) pthread_mutex_lock(m)
#  define mutex_unlock(m) pthread_mutex_unlock(m)
#  define cond_init(c) pthread_cond_init((c), NULL)
#  define cond_wait(c, m) pthread_cond_wait((c), (m))
#  define cond_signal(c) pthread_cond_broadcast(c)
#endif

/* What the callback shares with main. */
typedef struct {
    oam_bridge *bridge; /* set before the first send; read by the callback */
    host_mutex lock;
    host_cond changed;
    int finished;       /* guarded by lock: the turn's response arrived */
} host;

/* Copies the first "id":"…" string of a message (tool/call ids look like "t-1"). */
static int first_string_id(const char *message, char *out, size_t size) {
    const char *start = strstr(message, "\"id\":\"");
    if (start == NULL) {
        return 0;
    }
    start += 6;
    const char *end = strchr(start, '"');
    if (end == NULL || (size_t)(end - start) >= size) {
        return 0;
    }
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = 0;
    return 1;
}

/* Runs on the bridge's own thread, one message at a time. */
static void on_message(const char *message, void *user_data) {
    host *h = (host *)user_data;
    printf("<- %s\n", message);
    fflush(stdout);

    if (strstr(message, "\"method\":\"tool/call\"") != NULL) {
        /* The game would ring the bell here. Answering from the callback is allowed. */
        char id[64];
        if (first_string_id(message, id, sizeof id)) {
            char reply[256];
            snprintf(reply, sizeof reply,
                     "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"output\":{\"rang\":true,\"times\":3}}}", id);
            printf("-> %s\n", reply);
            oam_bridge_send(h->bridge, reply);
        }
        return;
    }
    if (strstr(message, "\"id\":\"turn\"") != NULL && strstr(message, "\"method\"") == NULL) {
        mutex_lock(&h->lock);
        h->finished = 1;
        cond_signal(&h->changed);
        mutex_unlock(&h->lock);
    }
}

int main(int argc, char **argv) {
    int live = argc > 1 && strcmp(argv[1], "--live") == 0;
    printf("libOpenAppleModelsFFI %s\n", oam_version());

    host h;
    memset(&h, 0, sizeof h);
    mutex_init(&h.lock);
    cond_init(&h.changed);
    h.bridge = oam_bridge_create(on_message, &h);
    if (h.bridge == NULL) {
        fprintf(stderr, "could not create the bridge (the reason is above)\n");
        return 1;
    }

    /* A blocking call: "jsonrpc" and "id" may be left out. */
    char *availability = oam_call_blocking(h.bridge, "{\"method\":\"model/availability\"}", 5000);
    printf("model/availability: %s\n", availability ? availability : "(null)");
    oam_string_free(availability);

    const char *model = live ? "\"system\""
                             : "{\"type\":\"scripted\",\"steps\":["
                               "{\"toolCalls\":[{\"name\":\"ring_bell\",\"arguments\":{\"times\":3}}]},"
                               "{\"template\":\"I rang the bell: {toolOutput}\",\"chunks\":3}]}";
    char create[1024];
    snprintf(create, sizeof create,
             "{\"jsonrpc\":\"2.0\",\"id\":\"bell\",\"method\":\"session/create\",\"params\":{"
             "\"session\":\"bell\","
             "\"instructions\":\"You guard the bell tower. Use the tool to ring the bell.\","
             "\"tools\":[{\"name\":\"ring_bell\",\"description\":\"Rings the tower bell. Returns whether it rang.\","
             "\"parameters\":{\"type\":\"object\",\"properties\":{\"times\":{\"type\":\"integer\",\"minimum\":1,"
             "\"maximum\":12}},\"required\":[\"times\"]}}],"
             "\"options\":{\"toolChoice\":\"required\"},"
             "\"model\":%s}}",
             model);
    /* Pipelined: the turn may be sent before the session's response arrives. */
    oam_bridge_send(h.bridge, create);
    oam_bridge_send(h.bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"turn\",\"method\":\"session/respond\","
                              "\"params\":{\"session\":\"bell\",\"prompt\":\"Ring the bell three times.\",\"stream\":true}}");

    mutex_lock(&h.lock);
    while (!h.finished) {
        cond_wait(&h.changed, &h.lock);
    }
    mutex_unlock(&h.lock);

    oam_bridge_destroy(h.bridge);
    printf("done\n");
    return 0;
}
