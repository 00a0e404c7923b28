/*
 * oam-ffi-tests SCENARIO: tests of libOpenAppleModelsFFI that need a real C host. JUnit
 * (NativeLibraryIT) runs one scenario per process and checks the exit status; a scenario prints
 * its progress and failures to stderr and never writes to stdout, so the test can also check that
 * the library leaves stdout alone. Every wait is on a condition variable with a deadline, never a
 * sleep. Exit status 0: passed; 1: a check failed.
 */
#include "open_apple_models.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <jni.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAIT_SECONDS 60

/*
 * Ends the process without running exit()'s handlers and library destructors. The JVM is still running
 * when a scenario ends (a host never destroys it), and exit() would run libjvm's C++ static destructors
 * while its threads go on: under -Xcheck:jni the periodic signal check then compares the handlers with a
 * table those destructors just freed and reports every handler as "modified" on stdout (seen on a loaded
 * CI machine; nothing in the process had touched a handler). _exit() leaves the JVM's memory intact.
 */
static void leave(int status) {
    fflush(NULL);
    _exit(status);
}

static void fail(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fprintf(stderr, "FAILED: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
    leave(1);
}

static void note(const char *format, ...) {
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
}

#define CHECK(condition, ...)     \
    do {                          \
        if (!(condition)) {       \
            fail(__VA_ARGS__);    \
        }                         \
    } while (0)

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct timespec deadline_in(int seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += seconds;
    return ts;
}

/* ---- a little JSON: the raw text of a top-level member ------------------------------------ */

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
        p++;
    }
    return p;
}

static const char *skip_string(const char *p) {
    p++;
    while (*p && *p != '"') {
        if (*p == '\\' && p[1]) {
            p++;
        }
        p++;
    }
    return *p ? p + 1 : p;
}

static const char *skip_value(const char *p) {
    p = skip_ws(p);
    if (*p == '"') {
        return skip_string(p);
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (*p) {
            if (*p == '"') {
                p = skip_string(p);
                continue;
            }
            if (*p == '{' || *p == '[') {
                depth++;
            } else if (*p == '}' || *p == ']') {
                if (--depth == 0) {
                    return p + 1;
                }
            }
            p++;
        }
        return p;
    }
    while (*p && *p != ',' && *p != '}' && *p != ']') {
        p++;
    }
    return p;
}

/* Finds member key of the JSON object starting at json; sets *start and *length to its raw value. */
static int span(const char *json, const char *key, const char **start, size_t *length) {
    const char *p = skip_ws(json);
    if (*p != '{') {
        return 0;
    }
    p++;
    size_t key_length = strlen(key);
    for (;;) {
        p = skip_ws(p);
        if (*p != '"') {
            return 0;
        }
        const char *key_start = p + 1;
        const char *key_end = skip_string(p) - 1;
        p = skip_ws(key_end + 1);
        if (*p != ':') {
            return 0;
        }
        p = skip_ws(p + 1);
        const char *value_end = skip_value(p);
        if ((size_t)(key_end - key_start) == key_length && strncmp(key_start, key, key_length) == 0) {
            *start = p;
            *length = (size_t)(value_end - p);
            return 1;
        }
        p = skip_ws(value_end);
        if (*p != ',') {
            return 0;
        }
        p++;
    }
}

/* The raw text of a member (or of params.<key> when key starts with "params."), copied into out. */
static int member(const char *json, const char *key, char *out, size_t size) {
    const char *start;
    size_t length;
    if (strncmp(key, "params.", 7) == 0) {
        const char *params;
        size_t params_length;
        if (!span(json, "params", &params, &params_length)) {
            return 0;
        }
        json = params;
        key += 7;
    }
    if (!span(json, key, &start, &length)) {
        return 0;
    }
    if (length >= size) {
        length = size - 1;
    }
    memcpy(out, start, length);
    out[length] = 0;
    return 1;
}

static int has(const char *json, const char *key) {
    const char *start;
    size_t length;
    return span(json, key, &start, &length);
}

static int is_response(const char *line) { return has(line, "id") && !has(line, "method"); }

static int is_method(const char *line, const char *method) {
    char value[128];
    char quoted[128];
    snprintf(quoted, sizeof quoted, "\"%s\"", method);
    return member(line, "method", value, sizeof value) && strcmp(value, quoted) == 0;
}

static int response_to(const char *line, const char *raw_id) {
    char id[256];
    return is_response(line) && member(line, "id", id, sizeof id) && strcmp(id, raw_id) == 0;
}

/* ---- a recording host -------------------------------------------------------------------- */

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    char **lines;          /* guarded by lock */
    size_t count, capacity;
    oam_bridge *bridge;
    int answer_tools;      /* reply {"output":"ding"} to every tool/call from the callback */
    atomic_int inside;     /* callbacks running right now (must never exceed 1) */
    atomic_int overlaps;
    atomic_int after_gone; /* callbacks after destroy returned */
    atomic_int gone;
    pthread_t callback_thread;
    atomic_int callback_threads_seen; /* 1 once a thread was recorded; 2 if another thread called */
} recorder;

static void recorder_init(recorder *r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
}

static void recorder_free(recorder *r) {
    for (size_t i = 0; i < r->count; i++) {
        free(r->lines[i]);
    }
    free(r->lines);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->changed);
    memset(r, 0xAB, sizeof *r); /* a late callback would trip over this */
}

static void reply_ding(oam_bridge *bridge, const char *tool_call) {
    char id[128];
    char reply[256];
    if (member(tool_call, "id", id, sizeof id)) {
        snprintf(reply, sizeof reply, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"output\":\"ding\"}}", id);
        int rc = oam_bridge_send(bridge, reply);
        if (rc != OAM_OK) {
            fail("answering %s from the callback returned %d", id, rc);
        }
    }
}

static void check_callback_entry(recorder *r) {
    if (atomic_load(&r->gone)) {
        atomic_fetch_add(&r->after_gone, 1);
    }
    if (atomic_fetch_add(&r->inside, 1) != 0) {
        atomic_fetch_add(&r->overlaps, 1);
    }
    int expected = 0;
    if (atomic_compare_exchange_strong(&r->callback_threads_seen, &expected, 1)) {
        r->callback_thread = pthread_self();
    } else if (!pthread_equal(r->callback_thread, pthread_self())) {
        atomic_store(&r->callback_threads_seen, 2);
    }
}

static void on_record(const char *message, void *user_data) {
    recorder *r = (recorder *)user_data;
    check_callback_entry(r);
    if (r->answer_tools && is_method(message, "tool/call") && has(message, "id")) {
        reply_ding(r->bridge, message);
    }
    char *copy = strdup(message);
    pthread_mutex_lock(&r->lock);
    if (r->count == r->capacity) {
        r->capacity = r->capacity ? r->capacity * 2 : 64;
        r->lines = realloc(r->lines, r->capacity * sizeof *r->lines);
    }
    r->lines[r->count++] = copy;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    atomic_fetch_sub(&r->inside, 1);
}

typedef int (*line_test)(const char *line, const char *arg);

/* Waits for the first line (from index *from on) that passes test; returns a copy, advances *from. */
static char *await_line(recorder *r, size_t *from, line_test test, const char *arg, const char *what) {
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    size_t index = from ? *from : 0;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        for (; index < r->count; index++) {
            if (test(r->lines[index], arg)) {
                char *copy = strdup(r->lines[index]);
                if (from) {
                    *from = index + 1;
                }
                pthread_mutex_unlock(&r->lock);
                return copy;
            }
        }
        if (pthread_cond_timedwait(&r->changed, &r->lock, &deadline) == ETIMEDOUT) {
            size_t count = r->count;
            pthread_mutex_unlock(&r->lock);
            fail("timed out waiting for %s (%zu messages so far)", what, count);
        }
    }
}

static int test_response(const char *line, const char *raw_id) { return response_to(line, raw_id); }
static int test_method(const char *line, const char *method) { return is_method(line, method); }
static int test_event_type(const char *line, const char *type) {
    char event[4096];
    char value[128];
    char quoted[128];
    snprintf(quoted, sizeof quoted, "\"%s\"", type);
    return is_method(line, "session/event") && member(line, "params.event", event, sizeof event)
           && member(event, "type", value, sizeof value) && strcmp(value, quoted) == 0;
}

static int test_event_containing(const char *line, const char *text) {
    return is_method(line, "session/event") && strstr(line, text) != NULL;
}

static void send_ok(oam_bridge *bridge, const char *line) {
    int rc = oam_bridge_send(bridge, line);
    CHECK(rc == OAM_OK, "oam_bridge_send returned %d for %s", rc, line);
}

static char *call(oam_bridge *bridge, const char *json, int timeout_ms) {
    char *answer = oam_call_blocking(bridge, json, timeout_ms);
    CHECK(answer != NULL, "oam_call_blocking returned NULL for %s", json);
    return answer;
}

/* A result (not an error) from oam_call_blocking, freed by the caller. */
static char *call_ok(oam_bridge *bridge, const char *json) {
    char *answer = call(bridge, json, 30000);
    CHECK(has(answer, "result"), "expected a result for %s, got %s", json, answer);
    return answer;
}

static oam_bridge *create_recorded(recorder *r) {
    oam_bridge *bridge = oam_bridge_create(on_record, r);
    CHECK(bridge != NULL, "oam_bridge_create returned NULL");
    r->bridge = bridge;
    return bridge;
}

static void destroy_recorded(recorder *r) {
    oam_bridge_destroy(r->bridge);
    atomic_store(&r->gone, 1);
}

/* ---- scenarios ---------------------------------------------------------------------------- */

#define BELL_TOOL "{\"name\":\"ring_bell\",\"description\":\"Ring the bell.\"}"

/* A plain round trip: used by the tests of how the JVM is found. */
static int scenario_ping(void) {
    recorder r;
    recorder_init(&r);
    oam_bridge *bridge = create_recorded(&r);
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
    free(await_line(&r, NULL, test_response, "1", "the ping's response"));
    destroy_recorded(&r);
    recorder_free(&r);
    note("ping ok");
    return 0;
}

/* oam_bridge_create must return NULL (the JUnit side checks stderr's explanation). */
static int scenario_expect_null(void) {
    recorder r;
    recorder_init(&r);
    oam_bridge *bridge = oam_bridge_create(on_record, &r);
    CHECK(bridge == NULL, "oam_bridge_create succeeded but was expected to fail");
    note("create returned NULL as expected");
    return 0;
}

/* A bad setting fails create; once fixed, the next create in the same process works. */
static int scenario_bad_setting(void) {
    setenv("OAM_BRIDGE_MAX_SESSIONS", "zero", 1);
    recorder r;
    recorder_init(&r);
    CHECK(oam_bridge_create(on_record, &r) == NULL, "a bad OAM_BRIDGE_MAX_SESSIONS was accepted");
    setenv("OAM_BRIDGE_MAX_SESSIONS", "1", 1);
    oam_bridge *bridge = create_recorded(&r);
    free(call_ok(bridge, "{\"method\":\"session/create\",\"params\":{\"model\":\"scripted\"}}"));
    char *second = call(bridge, "{\"method\":\"session/create\",\"params\":{\"model\":\"scripted\"}}", 30000);
    CHECK(strstr(second, "\"session_limit\"") != NULL, "the limit of 1 session was not applied: %s", second);
    oam_string_free(second);
    destroy_recorded(&r);
    recorder_free(&r);
    return 0;
}

/*
 * oam_bridge_create_with_settings: malformed settings are refused before any JVM starts, then settings alone
 * (no OAM_JAVA_HOME, JAVA_HOME or JVM folders; an OAM_CLASSPATH that names nothing) start the bridge with the
 * given class path, Java home, log level and session limit. OAM_TEST_SETTINGS is the valid settings object.
 */
static int scenario_json_settings(void) {
    static const char *refused[] = {
        "", "[]", "{", "{\"javaHome\": \"/x\"", "{\"nope\": 1}", "{\"maxSessions\": \"two\"}",
        "{\"scriptedModels\": 1}", "{\"javaHome\": 5}", "{\"logLevel\": \"info\", \"logLevel\": \"off\"}",
        "{\"classPath\": \"a\"} x", "{\"model\": \"\\ud800\"}", "{\"model\": \"tab\there\"}",
        "{\"maxSessions\": -}", "{,}", "{\"maxSessions\": 1,}",
    };
    recorder r;
    recorder_init(&r);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        CHECK(oam_bridge_create_with_settings(refused[i], on_record, &r) == NULL, "settings %s were accepted", refused[i]);
    }
    note("%d malformed settings refused", (int)(sizeof refused / sizeof refused[0]));
    const char *settings = getenv("OAM_TEST_SETTINGS");
    CHECK(settings != NULL, "OAM_TEST_SETTINGS is not set");
    oam_bridge *bridge = oam_bridge_create_with_settings(settings, on_record, &r);
    CHECK(bridge != NULL, "oam_bridge_create_with_settings returned NULL for %s", settings);
    r.bridge = bridge;
    free(call_ok(bridge, "{\"method\":\"session/create\",\"params\":{\"model\":\"scripted\"}}"));
    char *second = call(bridge, "{\"method\":\"session/create\",\"params\":{\"model\":\"scripted\"}}", 30000);
    CHECK(strstr(second, "\"session_limit\"") != NULL, "maxSessions 1 was not applied: %s", second);
    oam_string_free(second);
    destroy_recorded(&r);
    recorder_free(&r);
    note("settings applied");
    return 0;
}

/* A JVM that failed to start cannot be started again; the second create says so. */
static int scenario_failed_jvm_twice(void) {
    recorder r;
    recorder_init(&r);
    CHECK(oam_bridge_create(on_record, &r) == NULL, "the first create was expected to fail");
    unsetenv("OAM_JVM_OPTIONS");
    CHECK(oam_bridge_create(on_record, &r) == NULL, "the second create was expected to fail too");
    return 0;
}

static const char *bad_utf8[] = {
    "\xC3\x28",         /* a lead byte without its continuation */
    "\xA0\xA1",         /* continuation bytes without a lead */
    "\xE2\x28\xA1",     /* broken three-byte sequence */
    "\xF0\x90\x28\xBC", /* broken four-byte sequence */
    "\xC0\xAF",         /* overlong '/' */
    "\xE0\x80\xAF",     /* overlong '/' in three bytes */
    "\xED\xA0\x80",     /* a UTF-16 surrogate */
    "\xF4\x90\x80\x80", /* above U+10FFFF */
    "\xFF",             /* never valid */
    "\xE2\x82",         /* truncated at the end of the line */
};

static int scenario_send_invalid(void) {
    CHECK(oam_bridge_create(NULL, NULL) == NULL, "create with a NULL callback succeeded");
    CHECK(oam_bridge_send(NULL, "{}") == OAM_ERROR_INVALID_ARGUMENT, "send with a NULL bridge");
    CHECK(oam_call_blocking(NULL, "{\"method\":\"ping\"}", 1000) == NULL, "call_blocking with a NULL bridge");
    oam_string_free(NULL);
    oam_bridge_destroy(NULL);

    recorder r;
    recorder_init(&r);
    oam_bridge *bridge = create_recorded(&r);
    CHECK(oam_bridge_send(bridge, NULL) == OAM_ERROR_INVALID_ARGUMENT, "send with a NULL line");
    CHECK(oam_call_blocking(bridge, NULL, 1000) == NULL, "call_blocking with a NULL json");
    for (size_t i = 0; i < sizeof bad_utf8 / sizeof bad_utf8[0]; i++) {
        char line[256];
        snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"ping\",\"params\":{\"x\":\"%s\"}}", i,
                 bad_utf8[i]);
        int rc = oam_bridge_send(bridge, line);
        CHECK(rc == OAM_ERROR_INVALID_UTF8, "bad UTF-8 case %zu returned %d", i, rc);
        char *answer = call(bridge, line, 5000);
        CHECK(strstr(answer, "-32700") && strstr(answer, "\"id\":null"), "call_blocking with bad UTF-8 case %zu: %s", i,
              answer);
        oam_string_free(answer);
    }
    /* Well-formed UTF-8 of every length passes, and ids come back byte for byte. */
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E\",\"method\":\"ping\"}");
    free(await_line(&r, NULL, test_response, "\"\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E\"", "the UTF-8 id's response"));
    /* Valid UTF-8 that is not JSON is the bridge's business: an asynchronous -32700. */
    send_ok(bridge, "{not json");
    char *parse_error = await_line(&r, NULL, test_response, "null", "the parse error");
    CHECK(strstr(parse_error, "-32700") != NULL, "expected -32700: %s", parse_error);
    free(parse_error);
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"ping\"}");
    free(await_line(&r, NULL, test_response, "\"last\"", "the last ping"));
    pthread_mutex_lock(&r.lock);
    size_t count = r.count;
    pthread_mutex_unlock(&r.lock);
    CHECK(count == 3, "the rejected lines must not reach the bridge: %zu messages instead of 3", count);

    char *answer = call(bridge, "[1]", 5000);
    CHECK(strstr(answer, "-32600") != NULL, "a batch through call_blocking: %s", answer);
    oam_string_free(answer);
    answer = call(bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"t-1\",\"result\":{}}", 5000);
    CHECK(strstr(answer, "-32600") != NULL, "a response through call_blocking: %s", answer);
    oam_string_free(answer);
    destroy_recorded(&r);
    recorder_free(&r);
    return 0;
}

/* --- stress: 8 threads send at once while the callback answers tool calls --- */

#define STRESS_THREADS 8
#define STRESS_PER_THREAD 300
#define STRESS_TOTAL (STRESS_THREADS * STRESS_PER_THREAD)

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t done;
    oam_bridge *bridge;
    atomic_int inside, overlaps;
    pthread_t callback_thread;
    atomic_int threads_seen;
    int expected[STRESS_TOTAL]; /* 1: a request with an id was sent */
    atomic_int answers[STRESS_TOTAL];
    atomic_int answered, expected_total, duplicates, late_events, unknown_answers;
    atomic_int tool_calls, cancelled;
    unsigned char tool_call_seen[200000];
    atomic_int duplicate_tool_calls;
    pthread_barrier_t start;
} stress_state;

static stress_state stress;

static int stress_index(const char *raw_id) {
    int thread, n;
    if (sscanf(raw_id, "\"w%d-%d\"", &thread, &n) == 2 && thread >= 0 && thread < STRESS_THREADS && n >= 0
        && n < STRESS_PER_THREAD) {
        return thread * STRESS_PER_THREAD + n;
    }
    return -1;
}

static void on_stress(const char *message, void *user_data) {
    stress_state *s = (stress_state *)user_data;
    if (atomic_fetch_add(&s->inside, 1) != 0) {
        atomic_fetch_add(&s->overlaps, 1);
    }
    int expected_seen = 0;
    if (atomic_compare_exchange_strong(&s->threads_seen, &expected_seen, 1)) {
        s->callback_thread = pthread_self();
    } else if (!pthread_equal(s->callback_thread, pthread_self())) {
        atomic_store(&s->threads_seen, 2);
    }
    char id[128];
    if (is_method(message, "tool/call")) {
        int number;
        if (member(message, "id", id, sizeof id) && sscanf(id, "\"t-%d\"", &number) == 1 && number > 0
            && number < (int)sizeof s->tool_call_seen) {
            if (s->tool_call_seen[number]++) {
                atomic_fetch_add(&s->duplicate_tool_calls, 1);
            }
        }
        atomic_fetch_add(&s->tool_calls, 1);
        reply_ding(s->bridge, message);
    } else if (is_method(message, "session/event")) {
        int index = member(message, "params.requestId", id, sizeof id) ? stress_index(id) : -1;
        if (index >= 0 && atomic_load(&s->answers[index]) > 0) {
            atomic_fetch_add(&s->late_events, 1);
        }
    } else if (is_response(message) && member(message, "id", id, sizeof id)) {
        int index = stress_index(id);
        if (index < 0 || !s->expected[index]) {
            atomic_fetch_add(&s->unknown_answers, 1);
        } else {
            if (atomic_fetch_add(&s->answers[index], 1) > 0) {
                atomic_fetch_add(&s->duplicates, 1);
            }
            if (strstr(message, "\"cancelled\"")) {
                atomic_fetch_add(&s->cancelled, 1);
            }
            if (atomic_fetch_add(&s->answered, 1) + 1 == atomic_load(&s->expected_total)) {
                pthread_mutex_lock(&s->lock);
                pthread_cond_broadcast(&s->done);
                pthread_mutex_unlock(&s->lock);
            }
        }
    }
    atomic_fetch_sub(&s->inside, 1);
}

static void *stress_sender(void *argument) {
    int thread = (int)(intptr_t)argument;
    unsigned int seed = 7919u * (unsigned int)(thread + 1);
    char line[512];
    pthread_barrier_wait(&stress.start);
    for (int n = 0; n < STRESS_PER_THREAD; n++) {
        int kind = rand_r(&seed) % 100;
        int shared = rand_r(&seed) % 4 == 0;
        char session[16];
        snprintf(session, sizeof session, shared ? "shared" : "s%d", thread);
        if (kind < 60) {
            snprintf(line, sizeof line,
                     "{\"jsonrpc\":\"2.0\",\"id\":\"w%d-%d\",\"method\":\"session/respond\",\"params\":{\"session\":\"%s\","
                     "\"prompt\":\"p%d\",\"stream\":%s}}",
                     thread, n, session, n, rand_r(&seed) % 2 ? "true" : "false");
        } else if (kind < 70) {
            snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":\"w%d-%d\",\"method\":\"ping\"}", thread, n);
        } else if (kind < 80) {
            snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":\"w%d-%d\",\"method\":\"session/list\"}", thread, n);
        } else if (kind < 92) {
            snprintf(line, sizeof line,
                     "{\"jsonrpc\":\"2.0\",\"id\":\"w%d-%d\",\"method\":\"session/setContextNote\",\"params\":{\"session\":\"%s\","
                     "\"note\":\"n%d\"}}",
                     thread, n, session, n);
        } else if (kind < 97) {
            /* Cancels hit the shared session only, so the threads' own sessions finish their tool rounds. */
            snprintf(line, sizeof line,
                     "{\"jsonrpc\":\"2.0\",\"id\":\"w%d-%d\",\"method\":\"session/cancel\",\"params\":{\"session\":\"shared\"}}",
                     thread, n);
        } else {
            /* A notification: never answered, so not expected. */
            snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"session\":\"shared\"}}");
        }
        int rc = oam_bridge_send(stress.bridge, line);
        if (rc != OAM_OK) {
            fail("send from thread %d returned %d", thread, rc);
        }
    }
    return NULL;
}

static int scenario_stress(void) {
    memset(&stress, 0, sizeof stress);
    pthread_mutex_init(&stress.lock, NULL);
    pthread_cond_init(&stress.done, NULL);
    pthread_barrier_init(&stress.start, NULL, STRESS_THREADS);
    /* Work out which lines are requests (every kind but the last), replaying each thread's seed. */
    int total = 0;
    for (int thread = 0; thread < STRESS_THREADS; thread++) {
        unsigned int seed = 7919u * (unsigned int)(thread + 1);
        for (int n = 0; n < STRESS_PER_THREAD; n++) {
            int kind = rand_r(&seed) % 100;
            rand_r(&seed); /* shared */
            if (kind < 60) {
                rand_r(&seed); /* stream */
            }
            if (kind < 97) {
                stress.expected[thread * STRESS_PER_THREAD + n] = 1;
                total++;
            }
        }
    }
    atomic_store(&stress.expected_total, total);
    stress.bridge = oam_bridge_create(on_stress, &stress);
    CHECK(stress.bridge != NULL, "oam_bridge_create returned NULL");

    /* Scripts: tool rounds (sometimes two calls at once), streamed answers, short delays. */
    static char steps[16384];
    static char create[17000];
    size_t used = (size_t)snprintf(steps, sizeof steps, "[");
    for (int k = 0; k < 120; k++) {
        const char *step = k % 3 == 0   ? "{\"toolCalls\":[{\"name\":\"ring_bell\"}]}"
                           : k % 7 == 1 ? "{\"toolCalls\":[{\"name\":\"ring_bell\"},{\"name\":\"ring_bell\"}]}"
                           : k % 5 == 2 ? "{\"text\":\"slow answer\",\"chunks\":2,\"delayMs\":2}"
                                        : "{\"template\":\"{prompt} {toolOutputs}\",\"chunks\":3}";
        used += (size_t)snprintf(steps + used, sizeof steps - used, "%s%s", k ? "," : "", step);
    }
    snprintf(steps + used, sizeof steps - used, "]");
    for (int thread = 0; thread <= STRESS_THREADS; thread++) {
        char name[16];
        snprintf(name, sizeof name, thread == STRESS_THREADS ? "shared" : "s%d", thread);
        snprintf(create, sizeof create,
                 "{\"method\":\"session/create\",\"params\":{\"session\":\"%s\",\"tools\":[" BELL_TOOL
                 "],\"options\":{\"maxToolRounds\":3},\"model\":{\"type\":\"scripted\",\"steps\":%s,"
                 "\"fallback\":{\"text\":\"the end\"}}}}",
                 name, steps);
        free(call_ok(stress.bridge, create));
    }

    double started = now_seconds();
    pthread_t threads[STRESS_THREADS];
    for (int thread = 0; thread < STRESS_THREADS; thread++) {
        pthread_create(&threads[thread], NULL, stress_sender, (void *)(intptr_t)thread);
    }
    for (int thread = 0; thread < STRESS_THREADS; thread++) {
        pthread_join(threads[thread], NULL);
    }
    double sent = now_seconds();
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    pthread_mutex_lock(&stress.lock);
    while (atomic_load(&stress.answered) < total) {
        if (pthread_cond_timedwait(&stress.done, &stress.lock, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    pthread_mutex_unlock(&stress.lock);
    /* A final round trip: anything still due would have arrived before its answer. */
    free(call_ok(stress.bridge, "{\"method\":\"ping\"}"));
    double finished = now_seconds();
    note("stress: %d requests from %d threads sent in %.2f s, all answered after %.2f s; %d tool calls, %d cancelled",
         total, STRESS_THREADS, sent - started, finished - started, atomic_load(&stress.tool_calls),
         atomic_load(&stress.cancelled));

    int missing = 0;
    for (int i = 0; i < STRESS_TOTAL; i++) {
        if (stress.expected[i] && atomic_load(&stress.answers[i]) != 1) {
            if (missing++ < 5) {
                note("request w%d-%d was answered %d times", i / STRESS_PER_THREAD, i % STRESS_PER_THREAD,
                     atomic_load(&stress.answers[i]));
            }
        }
    }
    CHECK(missing == 0, "%d requests were not answered exactly once", missing);
    CHECK(atomic_load(&stress.duplicates) == 0, "duplicate answers");
    CHECK(atomic_load(&stress.unknown_answers) == 0, "%d answers to ids never sent", atomic_load(&stress.unknown_answers));
    CHECK(atomic_load(&stress.overlaps) == 0, "callbacks overlapped %d times", atomic_load(&stress.overlaps));
    CHECK(atomic_load(&stress.threads_seen) == 1, "callbacks ran on more than one thread");
    CHECK(atomic_load(&stress.late_events) == 0, "%d events arrived after their response", atomic_load(&stress.late_events));
    CHECK(atomic_load(&stress.duplicate_tool_calls) == 0, "a tool/call id was used twice");
    CHECK(atomic_load(&stress.tool_calls) > 100, "the stress exercised only %d tool calls", atomic_load(&stress.tool_calls));
    CHECK(atomic_load(&stress.cancelled) > 0, "the stress exercised no cancellation");
    oam_bridge_destroy(stress.bridge);
    return 0;
}

/* --- destroy while turns and tool calls are in flight --- */

static int scenario_destroy_inflight(void) {
    recorder *r = malloc(sizeof *r);
    recorder_init(r);
    oam_bridge *bridge = create_recorded(r);
    free(call_ok(bridge, "{\"method\":\"session/create\",\"params\":{\"session\":\"tool\",\"tools\":[" BELL_TOOL
                         "],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"ring_bell\"}]}]}}}"));
    free(call_ok(bridge, "{\"method\":\"session/create\",\"params\":{\"session\":\"slow\",\"model\":{\"type\":\"scripted\","
                         "\"steps\":[{\"text\":\"never\",\"delayMs\":60000}]}}}"));
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/respond\",\"params\":{\"session\":\"tool\",\"prompt\":\"x\"}}");
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/respond\",\"params\":{\"session\":\"slow\",\"prompt\":\"x\","
                    "\"stream\":true}}");
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/respond\",\"params\":{\"session\":\"slow\",\"prompt\":\"queued\"}}");
    free(await_line(r, NULL, test_method, "tool/call", "the outstanding tool/call"));
    free(await_line(r, NULL, test_event_type, "modelStep", "the slow turn to start"));
    double started = now_seconds();
    destroy_recorded(r);
    double took = now_seconds() - started;
    note("destroy with a turn waiting for a tool, a turn in a 60 s step and a queued turn took %.3f s", took);
    CHECK(took < 5.0, "destroy took %.3f s", took);
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->count; i++) {
        CHECK(!response_to(r->lines[i], "1") && !response_to(r->lines[i], "2"), "in-flight turns must not be answered: %s",
              r->lines[i]);
    }
    pthread_mutex_unlock(&r->lock);
    CHECK(atomic_load(&r->after_gone) == 0, "a callback ran after destroy returned");
    recorder_free(r);
    free(r); /* user_data may go right after destroy returned */

    /* The JVM and other bridges carry on. */
    recorder other;
    recorder_init(&other);
    oam_bridge *next = create_recorded(&other);
    free(call_ok(next, "{\"method\":\"ping\"}"));
    destroy_recorded(&other);
    recorder_free(&other);
    return 0;
}

/* --- destroy from inside the callback --- */

typedef struct {
    recorder r;
    atomic_int destroyed_inside;
    atomic_int calls_after;
} self_destroying;

static void on_self_destroy(const char *message, void *user_data) {
    self_destroying *h = (self_destroying *)user_data;
    if (atomic_load(&h->destroyed_inside)) {
        atomic_fetch_add(&h->calls_after, 1);
        return;
    }
    on_record(message, &h->r);
    if (response_to(message, "\"bye\"")) {
        oam_bridge_destroy(h->r.bridge); /* the last call on this bridge */
        pthread_mutex_lock(&h->r.lock);
        atomic_store(&h->destroyed_inside, 1);
        pthread_cond_broadcast(&h->r.changed);
        pthread_mutex_unlock(&h->r.lock);
    }
}

static int scenario_destroy_in_callback(void) {
    self_destroying h;
    memset(&h, 0, sizeof h);
    recorder_init(&h.r);
    oam_bridge *bridge = oam_bridge_create(on_self_destroy, &h);
    CHECK(bridge != NULL, "oam_bridge_create returned NULL");
    h.r.bridge = bridge;
    free(call_ok(bridge, "{\"method\":\"session/create\",\"params\":{\"session\":\"tool\",\"tools\":[" BELL_TOOL
                         "],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"ring_bell\"}]}]}}}"));
    free(call_ok(bridge, "{\"method\":\"session/create\",\"params\":{\"session\":\"slow\",\"model\":{\"type\":\"scripted\","
                         "\"steps\":[{\"text\":\"never\",\"delayMs\":60000}]}}}"));
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/respond\",\"params\":{\"session\":\"tool\",\"prompt\":\"x\"}}");
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/respond\",\"params\":{\"session\":\"slow\",\"prompt\":\"x\","
                    "\"stream\":true}}");
    free(await_line(&h.r, NULL, test_method, "tool/call", "the outstanding tool/call"));
    free(await_line(&h.r, NULL, test_event_type, "modelStep", "the slow turn to start"));
    double started = now_seconds();
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"bye\",\"method\":\"ping\"}");
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    pthread_mutex_lock(&h.r.lock);
    while (!atomic_load(&h.destroyed_inside)) {
        CHECK(pthread_cond_timedwait(&h.r.changed, &h.r.lock, &deadline) != ETIMEDOUT, "the callback did not destroy");
    }
    pthread_mutex_unlock(&h.r.lock);
    note("destroy from inside the callback returned after %.3f s", now_seconds() - started);
    CHECK(now_seconds() - started < 2.0, "destroy from inside the callback blocked it");

    /* Other bridges work, and the destroyed one never calls back again. */
    recorder other;
    recorder_init(&other);
    oam_bridge *next = create_recorded(&other);
    free(call_ok(next, "{\"method\":\"session/create\",\"params\":{\"session\":\"tool\",\"tools\":[" BELL_TOOL
                       "],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"text\":\"ok\"}]}}}"));
    other.answer_tools = 1;
    send_ok(next, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/respond\",\"params\":{\"session\":\"tool\",\"prompt\":\"x\"}}");
    free(await_line(&other, NULL, test_response, "1", "a turn on another bridge"));
    destroy_recorded(&other);
    recorder_free(&other);
    CHECK(atomic_load(&h.calls_after) == 0, "%d callbacks after destroy", atomic_load(&h.calls_after));
    return 0;
}

/* --- two bridges in one process --- */

static int scenario_two_bridges(void) {
    recorder a, b;
    recorder_init(&a);
    recorder_init(&b);
    oam_bridge *first = create_recorded(&a);
    oam_bridge *second = create_recorded(&b);
    a.answer_tools = b.answer_tools = 1;
    CHECK(first != second, "two creates returned the same bridge");
    /* The same session name in each bridge, with different scripts. */
    send_ok(first, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/create\",\"params\":{\"session\":\"s\",\"tools\":[" BELL_TOOL
                   "],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},"
                   "{\"template\":\"alpha {toolOutput}\",\"delayMs\":200}]}}}");
    send_ok(second, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/create\",\"params\":{\"session\":\"s\",\"tools\":[" BELL_TOOL
                    "],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},"
                    "{\"template\":\"beta {toolOutput}\",\"delayMs\":200}]}}}");
    send_ok(first, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/respond\",\"params\":{\"session\":\"s\",\"prompt\":\"x\",\"stream\":true}}");
    send_ok(second, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/respond\",\"params\":{\"session\":\"s\",\"prompt\":\"x\",\"stream\":true}}");
    char *alpha = await_line(&a, NULL, test_response, "2", "the first bridge's turn");
    char *beta = await_line(&b, NULL, test_response, "2", "the second bridge's turn");
    CHECK(strstr(alpha, "\"text\":\"alpha ding\"") != NULL, "first bridge: %s", alpha);
    CHECK(strstr(beta, "\"text\":\"beta ding\"") != NULL, "second bridge: %s", beta);
    free(alpha);
    free(beta);
    CHECK(!pthread_equal(a.callback_thread, b.callback_thread), "each bridge has a callback thread of its own");
    /* One goes; the other is unaffected. */
    destroy_recorded(&a);
    char *list = call_ok(second, "{\"method\":\"session/list\"}");
    CHECK(strstr(list, "\"session\":\"s\"") != NULL, "the second bridge lost its session: %s", list);
    oam_string_free(list);
    destroy_recorded(&b);
    CHECK(atomic_load(&a.overlaps) == 0 && atomic_load(&b.overlaps) == 0, "callbacks overlapped");
    CHECK(atomic_load(&a.after_gone) == 0 && atomic_load(&b.after_gone) == 0, "a callback after destroy");
    recorder_free(&a);
    recorder_free(&b);
    return 0;
}

/* --- create and destroy 100 times; no thread is left behind --- */

typedef struct {
    int total;
    int named_oam; /* threads whose name starts with "oam-" */
} thread_census;

static thread_census count_threads(void) {
    thread_census census = {0, 0};
    DIR *tasks = opendir("/proc/self/task");
    CHECK(tasks != NULL, "cannot read /proc/self/task");
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        if (entry->d_name[0] == '.') {
            continue;
        }
        census.total++;
        if (atoi(entry->d_name) == (int)getpid()) {
            continue; /* the main thread carries the program's name */
        }
        char path[300], name[64] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
        FILE *comm = fopen(path, "r");
        if (comm != NULL) {
            if (fgets(name, sizeof name, comm) != NULL && strncmp(name, "oam-", 4) == 0) {
                census.named_oam++;
                if (getenv("OAM_TEST_VERBOSE")) {
                    note("thread %s: %s", entry->d_name, name);
                }
            }
            fclose(comm);
        }
    }
    closedir(tasks);
    return census;
}

/* Platform threads the JVM knows (attached host threads included), via JNI. */
static int java_thread_count(void) {
    jint(JNICALL * created)(JavaVM **, jsize, jsize *) =
        (jint(JNICALL *)(JavaVM **, jsize, jsize *))dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
    CHECK(created != NULL, "JNI_GetCreatedJavaVMs is not visible");
    JavaVM *vm;
    jsize count = 0;
    CHECK(created(&vm, 1, &count) == JNI_OK && count == 1, "no JVM");
    JNIEnv *env;
    CHECK((*vm)->AttachCurrentThread(vm, (void **)&env, NULL) == JNI_OK, "cannot attach");
    jclass thread = (*env)->FindClass(env, "java/lang/Thread");
    jobject map = (*env)->CallStaticObjectMethod(env, thread, (*env)->GetStaticMethodID(env, thread, "getAllStackTraces",
                                                                                      "()Ljava/util/Map;"));
    jclass map_class = (*env)->FindClass(env, "java/util/Map");
    int size = (*env)->CallIntMethod(env, map, (*env)->GetMethodID(env, map_class, "size", "()I"));
    (*env)->DeleteLocalRef(env, map);
    (*env)->DeleteLocalRef(env, map_class);
    (*env)->DeleteLocalRef(env, thread);
    return size;
}

typedef struct {
    oam_bridge *bridge;
    const char *line;
} one_send;

static void *send_and_exit(void *argument) {
    one_send *job = (one_send *)argument;
    send_ok(job->bridge, job->line);
    return NULL;
}

static int scenario_cycles(void) {
    thread_census after_first = {0, 0};
    int java_after_first = 0;
    double started = now_seconds();
    for (int cycle = 0; cycle < 100; cycle++) {
        recorder r;
        recorder_init(&r);
        oam_bridge *bridge = create_recorded(&r);
        r.answer_tools = 1;
        free(call_ok(bridge, "{\"method\":\"session/create\",\"params\":{\"session\":\"c\",\"tools\":[" BELL_TOOL
                             "],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},"
                             "{\"template\":\"{toolOutput}\",\"chunks\":2},{\"text\":\"late\",\"delayMs\":60000}]}}}"));
        /* From a thread that ends at once: the library must not leave it attached to the JVM. */
        one_send job = {bridge, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/respond\",\"params\":"
                                "{\"session\":\"c\",\"prompt\":\"x\",\"stream\":true}}"};
        pthread_t sender;
        pthread_create(&sender, NULL, send_and_exit, &job);
        pthread_join(sender, NULL);
        char *answer = await_line(&r, NULL, test_response, "1", "the cycle's turn");
        CHECK(strstr(answer, "\"text\":\"ding\"") != NULL, "cycle %d: %s", cycle, answer);
        free(answer);
        /* Leave a turn running into the destroy. */
        send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/respond\",\"params\":{\"session\":\"c\",\"prompt\":\"x\",\"stream\":true}}");
        free(await_line(&r, NULL, test_event_type, "modelStep", "the last turn to start"));
        double destroying = now_seconds();
        destroy_recorded(&r);
        if (getenv("OAM_TEST_VERBOSE")) {
            note("cycle %d: destroy took %.3f s", cycle, now_seconds() - destroying);
        }
        recorder_free(&r);
        if (cycle == 0) {
            after_first = count_threads();
            java_after_first = java_thread_count();
        }
    }
    /* Closing threads may need a moment to exit after destroy returned: poll with a deadline. */
    thread_census after_all = count_threads();
    int java_after_all = java_thread_count();
    double deadline = now_seconds() + 10;
    while ((after_all.named_oam > 0 || after_all.total > after_first.total + 8 || java_after_all > java_after_first + 8)
           && now_seconds() < deadline) {
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
        after_all = count_threads();
        java_after_all = java_thread_count();
    }
    note("100 cycles in %.2f s; OS threads after the first cycle: %d, after all: %d (oam-*: %d); JVM threads: %d, %d",
         now_seconds() - started, after_first.total, after_all.total, after_all.named_oam, java_after_first,
         java_after_all);
    CHECK(after_all.named_oam == 0, "%d oam-* threads are left", after_all.named_oam);
    CHECK(after_all.total <= after_first.total + 8, "threads grew from %d to %d", after_first.total, after_all.total);
    CHECK(java_after_all <= java_after_first + 8, "JVM threads grew from %d to %d", java_after_first, java_after_all);
    return 0;
}

/* --- oam_call_blocking --- */

typedef struct {
    recorder r;
    char *inside_answer;
} blocking_host;

static void on_blocking(const char *message, void *user_data) {
    blocking_host *h = (blocking_host *)user_data;
    if (response_to(message, "\"trigger\"")) {
        h->inside_answer = oam_call_blocking(h->r.bridge, "{\"method\":\"ping\"}", 0);
    }
    on_record(message, &h->r);
}

static int scenario_call_blocking(void) {
    blocking_host h;
    memset(&h, 0, sizeof h);
    recorder_init(&h.r);
    oam_bridge *bridge = oam_bridge_create(on_blocking, &h);
    CHECK(bridge != NULL, "oam_bridge_create returned NULL");
    h.r.bridge = bridge;

    char *answer = call(bridge, "{\"method\":\"model/availability\"}", 5000);
    CHECK(strstr(answer, "\"available\":false") && strstr(answer, "\"jsonrpc\":\"2.0\""), "availability: %s", answer);
    oam_string_free(answer);
    answer = call(bridge, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", 0);
    CHECK(strcmp(answer, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}") == 0, "ping without a timeout: %s", answer);
    oam_string_free(answer);
    answer = call(bridge, "{\"id\":\"u\",\"method\":\"no/such\"}", 5000);
    CHECK(strstr(answer, "-32601") && strstr(answer, "\"id\":\"u\""), "unknown method: %s", answer);
    oam_string_free(answer);
    answer = call(bridge, "{broken", 5000);
    CHECK(strstr(answer, "-32700") != NULL, "malformed: %s", answer);
    oam_string_free(answer);

    /* Streamed events go to the callback, tagged with the call's id (or a private local- id). */
    free(call_ok(bridge, "{\"method\":\"session/create\",\"params\":{\"session\":\"s\",\"model\":{\"type\":\"scripted\","
                         "\"steps\":[{\"text\":\"one two three\",\"chunks\":3},{\"text\":\"four\"},"
                         "{\"text\":\"never\",\"delayMs\":10000},{\"text\":\"after\"}]}}}"));
    answer = call(bridge, "{\"id\":\"blk\",\"method\":\"session/respond\",\"params\":{\"session\":\"s\",\"prompt\":\"x\",\"stream\":true}}", 10000);
    CHECK(strstr(answer, "\"text\":\"one two three\"") != NULL, "the turn: %s", answer);
    oam_string_free(answer);
    char *event = await_line(&h.r, NULL, test_event_type, "text", "a text event");
    CHECK(strstr(event, "\"requestId\":\"blk\"") != NULL, "events carry the call's id: %s", event);
    free(event);
    answer = call(bridge, "{\"method\":\"session/respond\",\"params\":{\"session\":\"s\",\"prompt\":\"x\",\"stream\":true}}", 10000);
    CHECK(strstr(answer, "\"text\":\"four\"") && strstr(answer, "\"id\":\"local-"), "without an id: %s", answer);
    oam_string_free(answer);
    free(await_line(&h.r, NULL, test_event_containing, "\"requestId\":\"local-", "an event with a private local- id"));
    pthread_mutex_lock(&h.r.lock);
    for (size_t i = 0; i < h.r.count; i++) {
        CHECK(!is_response(h.r.lines[i]), "call_blocking's response reached the callback: %s", h.r.lines[i]);
    }
    pthread_mutex_unlock(&h.r.lock);

    /* A timeout cancels the request: the next turn does not wait for the 10 s step. */
    double started = now_seconds();
    answer = call(bridge, "{\"id\":\"slow\",\"method\":\"session/respond\",\"params\":{\"session\":\"s\",\"prompt\":\"x\"}}", 200);
    double took = now_seconds() - started;
    CHECK(strstr(answer, "-32024") && strstr(answer, "\"timeout\"") && strstr(answer, "\"id\":\"slow\""), "timeout: %s", answer);
    CHECK(took < 2.0, "the timeout took %.3f s", took);
    oam_string_free(answer);
    answer = call(bridge, "{\"method\":\"session/respond\",\"params\":{\"session\":\"s\",\"prompt\":\"x\"}}", 5000);
    CHECK(strstr(answer, "\"text\":\"after\"") != NULL, "the session after the cancelled turn: %s", answer);
    oam_string_free(answer);
    note("a 200 ms timeout returned after %.3f s", took);

    /* From inside the callback it refuses at once instead of waiting for itself. */
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"trigger\",\"method\":\"ping\"}");
    free(await_line(&h.r, NULL, test_response, "\"trigger\"", "the trigger"));
    CHECK(h.inside_answer && strstr(h.inside_answer, "-32600") && strstr(h.inside_answer, "inside the callback"),
          "call_blocking inside the callback: %s", h.inside_answer ? h.inside_answer : "(null)");
    oam_string_free(h.inside_answer);

    /* A shutdown notification makes a waiting call return (what bindings do before destroy). */
    free(call_ok(bridge, "{\"method\":\"session/create\",\"params\":{\"session\":\"w\",\"model\":{\"type\":\"scripted\","
                         "\"steps\":[{\"text\":\"never\",\"delayMs\":60000}]}}}"));
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"start\",\"method\":\"session/respond\",\"params\":{\"session\":\"w\",\"prompt\":\"x\",\"stream\":true}}");
    free(await_line(&h.r, NULL, test_event_type, "modelStep", "the long turn"));
    started = now_seconds();
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}");
    answer = call(bridge, "{\"method\":\"ping\"}", 0);
    CHECK(strstr(answer, "\"shut_down\"") != NULL, "after shutdown: %s", answer);
    oam_string_free(answer);
    oam_bridge_destroy(bridge);
    recorder_free(&h.r);
    return 0;
}

/* --- join a JVM the host started itself, without the jar on its class path --- */

static int scenario_join(void) {
    const char *java_home = getenv("OAM_TEST_JAVA_HOME");
    CHECK(java_home != NULL, "OAM_TEST_JAVA_HOME is not set");
    char path[4096];
    snprintf(path, sizeof path, "%s/lib/server/libjvm.so", java_home);
    /* RTLD_LOCAL: the library must find this JVM without a global symbol. */
    void *jvm = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK(jvm != NULL, "cannot load %s: %s", path, dlerror());
    jint(JNICALL * create_vm)(JavaVM **, void **, void *) = (jint(JNICALL *)(JavaVM **, void **, void *))dlsym(jvm, "JNI_CreateJavaVM");
    jint(JNICALL * created_vms)(JavaVM **, jsize, jsize *) = (jint(JNICALL *)(JavaVM **, jsize, jsize *))dlsym(jvm, "JNI_GetCreatedJavaVMs");
    JavaVMOption options[2] = {{"-Djava.class.path=/nonexistent", NULL}, {"-Xrs", NULL}};
    JavaVMInitArgs args = {JNI_VERSION_10, 2, options, JNI_FALSE};
    JavaVM *vm;
    JNIEnv *env;
    CHECK(create_vm(&vm, (void **)&env, &args) == JNI_OK, "the host could not start its own JVM");

    recorder r;
    recorder_init(&r);
    oam_bridge *bridge = create_recorded(&r);
    r.answer_tools = 1;
    free(call_ok(bridge, "{\"method\":\"session/create\",\"params\":{\"session\":\"j\",\"tools\":[" BELL_TOOL
                         "],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"template\":\"{toolOutput}\"}]}}}"));
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/respond\",\"params\":{\"session\":\"j\",\"prompt\":\"x\"}}");
    char *answer = await_line(&r, NULL, test_response, "1", "a turn in the joined JVM");
    CHECK(strstr(answer, "\"text\":\"ding\"") != NULL, "joined: %s", answer);
    free(answer);
    destroy_recorded(&r);
    recorder_free(&r);

    JavaVM *vms[2];
    jsize count = 0;
    created_vms(vms, 2, &count);
    CHECK(count == 1 && vms[0] == vm, "the library must join the host's JVM, not start another (%d)", (int)count);
    /* The engine lives in a class loader of its own: the host's class path does not see it. */
    (*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_10);
    jclass hidden = (*env)->FindClass(env, "dev/oam/ffi/NativeBridge");
    CHECK(hidden == NULL, "the entry class leaked into the host's class loader");
    (*env)->ExceptionClear(env);
    /* The host's System.out is left alone when the library did not start the JVM. */
    jclass system = (*env)->FindClass(env, "java/lang/System");
    jobject out = (*env)->GetStaticObjectField(env, system, (*env)->GetStaticFieldID(env, system, "out", "Ljava/io/PrintStream;"));
    jobject err = (*env)->GetStaticObjectField(env, system, (*env)->GetStaticFieldID(env, system, "err", "Ljava/io/PrintStream;"));
    CHECK(!(*env)->IsSameObject(env, out, err), "the library redirected the host's System.out");
    /* The bridge may load ggml into the joined JVM later (a llama model): no gdb backtrace on the host's stdout. */
    const char *backtrace = getenv("GGML_NO_BACKTRACE");
    CHECK(backtrace != NULL && strcmp(backtrace, "1") == 0, "GGML_NO_BACKTRACE after joining: %s",
          backtrace ? backtrace : "<unset>");
    note("joined the host's JVM");
    return 0;
}

/* A String from Java as a malloc'ed C string ("<null>" for null). */
static char *java_string(JNIEnv *env, jobject value) {
    if (value == NULL) {
        return strdup("<null>");
    }
    const char *chars = (*env)->GetStringUTFChars(env, (jstring)value, NULL);
    char *copy = strdup(chars ? chars : "<null>");
    (*env)->ReleaseStringUTFChars(env, (jstring)value, chars);
    return copy;
}

/*
 * Process hygiene when the library starts the JVM: GGML_NO_BACKTRACE is 1 afterwards if the host
 * had not set it, and keeps the host's value if it had; the JVM sees the same value (it was set
 * before the JVM started); with OAM_TEST_ERROR_FILE the JVM's arguments hold that -XX:ErrorFile.
 */
static int scenario_hygiene(void) {
    const char *before = getenv("GGML_NO_BACKTRACE");
    char expected[256];
    snprintf(expected, sizeof expected, "%s", before ? before : "1");
    note("GGML_NO_BACKTRACE before: %s", before ? before : "<unset>");
    recorder r;
    recorder_init(&r);
    oam_bridge *bridge = create_recorded(&r);
    send_ok(bridge, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
    free(await_line(&r, NULL, test_response, "1", "the ping's response"));
    const char *after = getenv("GGML_NO_BACKTRACE");
    CHECK(after != NULL && strcmp(after, expected) == 0, "GGML_NO_BACKTRACE in the host: %s, expected %s",
          after ? after : "<unset>", expected);

    jint(JNICALL * created_vms)(JavaVM **, jsize, jsize *) =
        (jint(JNICALL *)(JavaVM **, jsize, jsize *))dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
    CHECK(created_vms != NULL, "no JVM library in the process");
    JavaVM *vm = NULL;
    jsize count = 0;
    CHECK(created_vms(&vm, 1, &count) == JNI_OK && count == 1, "no JVM was created");
    JNIEnv *env = NULL;
    CHECK((*vm)->AttachCurrentThread(vm, (void **)&env, NULL) == JNI_OK, "cannot attach");
    jclass system = (*env)->FindClass(env, "java/lang/System");
    jmethodID getenv_id = (*env)->GetStaticMethodID(env, system, "getenv", "(Ljava/lang/String;)Ljava/lang/String;");
    char *seen = java_string(env, (*env)->CallStaticObjectMethod(env, system, getenv_id,
                                                                 (*env)->NewStringUTF(env, "GGML_NO_BACKTRACE")));
    CHECK(strcmp(seen, expected) == 0, "the JVM's System.getenv(\"GGML_NO_BACKTRACE\"): %s, expected %s", seen, expected);
    free(seen);

    const char *error_file = getenv("OAM_TEST_ERROR_FILE");
    if (error_file != NULL) {
        jclass factory = (*env)->FindClass(env, "java/lang/management/ManagementFactory");
        jobject runtime = (*env)->CallStaticObjectMethod(
            env, factory, (*env)->GetStaticMethodID(env, factory, "getRuntimeMXBean", "()Ljava/lang/management/RuntimeMXBean;"));
        jclass bean = (*env)->FindClass(env, "java/lang/management/RuntimeMXBean");
        jobject arguments = (*env)->CallObjectMethod(env, runtime, (*env)->GetMethodID(env, bean, "getInputArguments", "()Ljava/util/List;"));
        jclass object = (*env)->FindClass(env, "java/lang/Object");
        char *text = java_string(env, (*env)->CallObjectMethod(env, arguments,
                                                               (*env)->GetMethodID(env, object, "toString", "()Ljava/lang/String;")));
        note("JVM arguments: %s", text);
        CHECK(strstr(text, "--enable-native-access=ALL-UNNAMED") != NULL, "native access is not enabled: %s", text);
        CHECK(strstr(text, error_file) != NULL, "no %s among the JVM's arguments: %s", error_file, text);
        free(text);
    }
    CHECK(!(*env)->ExceptionCheck(env), "a Java exception while checking");
    destroy_recorded(&r);
    recorder_free(&r);
    return 0;
}

/* 1 when a line of /proc/self/maps contains text (a library mapped into this process), 0 when none does. */
static int mapped(const char *text) {
    FILE *maps = fopen("/proc/self/maps", "r");
    CHECK(maps != NULL, "cannot read /proc/self/maps: %s", strerror(errno));
    char line[8192];
    int found = 0;
    while (!found && fgets(line, sizeof line, maps) != NULL) {
        found = strstr(line, text) != NULL;
    }
    fclose(maps);
    return found;
}

/*
 * llama.cpp's library (libjllama) is mapped only once a llama model is created: creating a bridge,
 * whose configuration discovers the llama backend, and running a scripted turn load nothing native;
 * a session on the GGUF file OAM_TEST_GGUF does (unless OAM_TEST_NO_LLAMA_TURN is set).
 */
static int scenario_lazy_llama(void) {
    const char *gguf = getenv("OAM_TEST_GGUF");
    CHECK(gguf != NULL && *gguf, "OAM_TEST_GGUF is not set");
    recorder r;
    recorder_init(&r);
    oam_bridge *bridge = create_recorded(&r);
    char *init = call_ok(bridge, "{\"method\":\"initialize\",\"params\":{}}");
    CHECK(strstr(init, "\"llama\"") != NULL, "the llama backend is not registered: %s", init);
    free(init);
    free(call_ok(bridge, "{\"method\":\"session/create\",\"params\":{\"session\":\"s\",\"model\":\"scripted\"}}"));
    free(call_ok(bridge, "{\"method\":\"session/respond\",\"params\":{\"session\":\"s\",\"prompt\":\"Hi.\"}}"));
    CHECK(!mapped("jllama"), "llama.cpp was loaded before any llama model was created");
    note("no jllama before a llama model");
    if (getenv("OAM_TEST_NO_LLAMA_TURN") != NULL) { /* -Xcheck:jni: de.kherud:llama's JNI code draws warnings */
        destroy_recorded(&r);
        recorder_free(&r);
        return 0;
    }
    char request[8192];
    snprintf(request, sizeof request, "{\"method\":\"session/create\",\"params\":{\"session\":\"l\",\"model\":"
             "{\"type\":\"llama\",\"path\":\"%s\"},\"options\":{\"maxResponseTokens\":2}}}", gguf);
    free(call_ok(bridge, request));
    free(call_ok(bridge, "{\"method\":\"session/respond\",\"params\":{\"session\":\"l\",\"prompt\":\"Hi.\"}}"));
    CHECK(mapped("jllama"), "a llama turn ran but no jllama is mapped (is the check blind?)");
    note("jllama mapped after the llama turn");
    destroy_recorded(&r);
    recorder_free(&r);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: oam-ffi-tests SCENARIO\n");
        return 2;
    }
    static const struct {
        const char *name;
        int (*run)(void);
    } scenarios[] = {
        {"ping", scenario_ping},
        {"expect-null", scenario_expect_null},
        {"bad-setting", scenario_bad_setting},
        {"json-settings", scenario_json_settings},
        {"failed-jvm-twice", scenario_failed_jvm_twice},
        {"send-invalid", scenario_send_invalid},
        {"stress", scenario_stress},
        {"destroy-inflight", scenario_destroy_inflight},
        {"destroy-in-callback", scenario_destroy_in_callback},
        {"two-bridges", scenario_two_bridges},
        {"cycles", scenario_cycles},
        {"call-blocking", scenario_call_blocking},
        {"join", scenario_join},
        {"hygiene", scenario_hygiene},
        {"lazy-llama", scenario_lazy_llama},
    };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            int status = scenarios[i].run();
            if (status == 0) {
                note("PASSED %s", argv[1]);
            }
            leave(status);
        }
    }
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
}
