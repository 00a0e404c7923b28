/*
 * Internals of libOpenAppleModelsFFI shared by oam_bridge.c and oam_jvm.c: platform shims
 * (mutexes, condition variables, threads, shared libraries, directories) and the JVM glue.
 * Linux and macOS use POSIX; Windows uses Win32 (SRW locks, condition variables, LoadLibrary).
 */
#ifndef OAM_INTERNAL_H
#define OAM_INTERNAL_H

#include <jni.h>
#include <stddef.h>

#if defined(_WIN32)
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h>
typedef SRWLOCK oam_mutex;
typedef CONDITION_VARIABLE oam_cond;
typedef DWORD oam_thread_id;
#  define OAM_MUTEX_INIT SRWLOCK_INIT
#  define OAM_PATH_SEP '\\'
#  define OAM_PATH_SEP_STR "\\"
#  define OAM_LIST_SEP ';'
#else
#  include <pthread.h>
typedef pthread_mutex_t oam_mutex;
typedef pthread_cond_t oam_cond;
typedef pthread_t oam_thread_id;
#  define OAM_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#  define OAM_PATH_SEP '/'
#  define OAM_PATH_SEP_STR "/"
#  define OAM_LIST_SEP ':'
#endif

/* ---- platform ---------------------------------------------------------------------------- */

void oam_mutex_init(oam_mutex *m);
void oam_mutex_destroy(oam_mutex *m);
void oam_mutex_lock(oam_mutex *m);
void oam_mutex_unlock(oam_mutex *m);
void oam_cond_init(oam_cond *c);
void oam_cond_destroy(oam_cond *c);
void oam_cond_wait(oam_cond *c, oam_mutex *m);
void oam_cond_broadcast(oam_cond *c);
oam_thread_id oam_thread_self(void);
int oam_thread_equal(oam_thread_id a, oam_thread_id b);

/* ---- settings ------------------------------------------------------------------------------ */

/*
 * The members of oam_bridge_create_with_settings()'s JSON object, each as the environment variable it replaces
 * (oam_settings.c lists them) with its value as text. A setting that is absent or null falls back to the
 * environment.
 */
typedef struct {
    int count;
    const char *variables[16]; /* static strings */
    char *values[16];          /* malloc'd */
} oam_settings;

/* Parses settings JSON; returns 0 with a reason in error when it is not a flat object of known settings. */
int oam_settings_parse(const char *json, oam_settings *settings, char *error, size_t error_size);
void oam_settings_free(oam_settings *settings);
/* The setting's value, else the environment variable's (getenv), else NULL. settings may be NULL. */
const char *oam_setting(const oam_settings *settings, const char *variable);

/* ---- diagnostics (stderr only) ------------------------------------------------------------ */

enum { OAM_LOG_DEBUG, OAM_LOG_INFO, OAM_LOG_WARNING, OAM_LOG_ERROR, OAM_LOG_OFF };

/* Reads the logLevel setting or OAM_BRIDGE_LOG; returns the level name to hand to Java ("warning" when unset). */
const char *oam_log_configure(const oam_settings *settings);
void oam_log(int level, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- the JVM ------------------------------------------------------------------------------ */

/*
 * The JVM and the entry class dev.oam.ffi.NativeBridge, ready to use. Filled by oam_jvm_ensure()
 * once per process (guarded by a process-wide lock), read-only afterwards.
 */
typedef struct {
    JavaVM *vm;
    jclass entry;           /* global ref */
    jmethodID create;       /* static NativeBridge create(long, String[]) */
    jmethodID send;         /* void send(byte[]) */
    jmethodID call_blocking;/* byte[] callBlocking(byte[], long) */
    jmethodID destroy;      /* void destroy(boolean) */
} oam_java;

/*
 * Starts or joins the JVM and loads the entry class. Returns NULL (after explaining why on
 * stderr). *owns_jvm tells whether this library started the JVM (then stdout is kept private).
 */
const oam_java *oam_jvm_ensure(const oam_settings *settings, int *owns_jvm);

/*
 * The JNIEnv of this thread, attaching it (as a daemon) when needed; it stays attached until the
 * thread ends. NULL on failure, explained on stderr.
 */
JNIEnv *oam_jvm_env(const oam_java *java);

/* Prints and clears a pending Java exception; returns 1 if there was one. */
int oam_jvm_report_exception(JNIEnv *env, const char *what);

/* Called by Java's writer thread with one outgoing line (registered with RegisterNatives). */
void JNICALL oam_native_deliver(JNIEnv *env, jclass cls, jlong handle, jbyteArray line);

#endif
