/*
 * Finding, starting or joining the JVM, and loading the engine's entry class.
 *
 * Order of the search (the first that applies wins):
 *   1. a JVM already running in this process (JNI_GetCreatedJavaVMs): it is joined;
 *   2. the javaHome setting, else OAM_JAVA_HOME: must be a JDK/JRE 21 or newer, otherwise creating fails;
 *   3. a release archive's runtime: ../runtime from the directory of this library;
 *   4. JAVA_HOME when it is 21 or newer (an older one is skipped with a note);
 *   5. the newest JDK >= 21 under the usual install directories (OAM_JVM_DIRS replaces them).
 * The classpath is the classPath setting, else OAM_CLASSPATH, else oam.jar in the directory of this library.
 */
#define OAM_BUILDING_LIBRARY 1 /* exports, not imports, on Windows */
#include "oam_internal.h"
#include "open_apple_models.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#  define OAM_JVM_LIBRARY "jvm.dll"
#else
#  include <dirent.h>
#  include <dlfcn.h>
#  include <sys/stat.h>
#  include <unistd.h>
#  if defined(__APPLE__)
#    define OAM_JVM_LIBRARY "libjvm.dylib"
#  else
#    define OAM_JVM_LIBRARY "libjvm.so"
#  endif
#endif

#define OAM_MIN_JAVA 21
#define OAM_ENTRY_CLASS "dev/oam/ffi/NativeBridge"
#define OAM_PATH_MAX 4096

static void detach_when_thread_ends(JavaVM *vm);

typedef jint(JNICALL *create_vm_fn)(JavaVM **, void **, void *);
typedef jint(JNICALL *created_vms_fn)(JavaVM **, jsize, jsize *);

/* ---- platform ---------------------------------------------------------------------------- */

#if defined(_WIN32)
void oam_mutex_init(oam_mutex *m) { InitializeSRWLock(m); }
void oam_mutex_destroy(oam_mutex *m) { (void)m; }
void oam_mutex_lock(oam_mutex *m) { AcquireSRWLockExclusive(m); }
void oam_mutex_unlock(oam_mutex *m) { ReleaseSRWLockExclusive(m); }
void oam_cond_init(oam_cond *c) { InitializeConditionVariable(c); }
void oam_cond_destroy(oam_cond *c) { (void)c; }
void oam_cond_wait(oam_cond *c, oam_mutex *m) { SleepConditionVariableSRW(c, m, INFINITE, 0); }
void oam_cond_broadcast(oam_cond *c) { WakeAllConditionVariable(c); }
oam_thread_id oam_thread_self(void) { return GetCurrentThreadId(); }
int oam_thread_equal(oam_thread_id a, oam_thread_id b) { return a == b; }
#else
void oam_mutex_init(oam_mutex *m) { pthread_mutex_init(m, NULL); }
void oam_mutex_destroy(oam_mutex *m) { pthread_mutex_destroy(m); }
void oam_mutex_lock(oam_mutex *m) { pthread_mutex_lock(m); }
void oam_mutex_unlock(oam_mutex *m) { pthread_mutex_unlock(m); }
void oam_cond_init(oam_cond *c) { pthread_cond_init(c, NULL); }
void oam_cond_destroy(oam_cond *c) { pthread_cond_destroy(c); }
void oam_cond_wait(oam_cond *c, oam_mutex *m) { pthread_cond_wait(c, m); }
void oam_cond_broadcast(oam_cond *c) { pthread_cond_broadcast(c); }
oam_thread_id oam_thread_self(void) { return pthread_self(); }
int oam_thread_equal(oam_thread_id a, oam_thread_id b) { return pthread_equal(a, b); }
#endif

static int file_exists(const char *path) {
#if defined(_WIN32)
    DWORD attributes = GetFileAttributesA(path);
    return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY);
#else
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
#endif
}

static int dir_exists(const char *path) {
#if defined(_WIN32)
    DWORD attributes = GetFileAttributesA(path);
    return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY);
#else
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
#endif
}

/* a + separator + b into out; an over-long result becomes "" (it names no file). */
static void path_join(char *out, size_t size, const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    int slash = la > 0 && (a[la - 1] == '/' || a[la - 1] == OAM_PATH_SEP);
    size_t total = la + (slash ? 0 : 1) + lb;
    if (total + 1 > size) {
        out[0] = 0;
        return;
    }
    memcpy(out, a, la);
    if (!slash) {
        out[la++] = OAM_PATH_SEP;
    }
    memcpy(out + la, b, lb);
    out[la + lb] = 0;
}

static void *library_open(const char *path) {
#if defined(_WIN32)
    /* The JVM's own DLLs live next to jvm.dll's parent directory; let Windows look there. */
    return (void *)LoadLibraryExA(path, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
#else
    return dlopen(path, RTLD_NOW | RTLD_GLOBAL);
#endif
}

static void *library_symbol(void *library, const char *name) {
#if defined(_WIN32)
    return (void *)GetProcAddress((HMODULE)library, name);
#else
    return dlsym(library, name);
#endif
}

static void library_error(char *out, size_t size) {
#if defined(_WIN32)
    snprintf(out, size, "Windows error %lu", (unsigned long)GetLastError());
#else
    const char *message = dlerror();
    snprintf(out, size, "%s", message ? message : "unknown error");
#endif
}

/* The directory this library was loaded from (for the jar next to it). */
static int library_directory(char *out, size_t size) {
#if defined(_WIN32)
    HMODULE self = NULL;
    if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                            (LPCSTR)(void *)&oam_version, &self)) {
        return 0;
    }
    DWORD n = GetModuleFileNameA(self, out, (DWORD)size);
    if (n == 0 || n >= size) {
        return 0;
    }
#else
    Dl_info info;
    if (!dladdr((void *)&oam_version, &info) || info.dli_fname == NULL) {
        return 0;
    }
    if (realpath(info.dli_fname, out) == NULL) {
        snprintf(out, size, "%s", info.dli_fname);
    }
#endif
    char *cut = strrchr(out, OAM_PATH_SEP);
#if defined(_WIN32)
    char *other = strrchr(out, '/');
    if (other > cut) {
        cut = other;
    }
#endif
    if (cut == NULL) {
        snprintf(out, size, ".");
    } else {
        *cut = 0;
    }
    return 1;
}

/* Calls visit(dir, name, context) for each entry of dir (not "." or ".."). */
static void list_directory(const char *dir, void (*visit)(const char *, const char *, void *), void *context) {
#if defined(_WIN32)
    char pattern[OAM_PATH_MAX];
    path_join(pattern, sizeof pattern, dir, "*");
    WIN32_FIND_DATAA entry;
    HANDLE find = FindFirstFileA(pattern, &entry);
    if (find == INVALID_HANDLE_VALUE) {
        return;
    }
    do {
        if (strcmp(entry.cFileName, ".") != 0 && strcmp(entry.cFileName, "..") != 0) {
            visit(dir, entry.cFileName, context);
        }
    } while (FindNextFileA(find, &entry));
    FindClose(find);
#else
    DIR *handle = opendir(dir);
    if (handle == NULL) {
        return;
    }
    struct dirent *entry;
    while ((entry = readdir(handle)) != NULL) {
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) {
            visit(dir, entry->d_name, context);
        }
    }
    closedir(handle);
#endif
}

/* ---- diagnostics -------------------------------------------------------------------------- */

static volatile int g_log_level = OAM_LOG_WARNING;

const char *oam_log_configure(const oam_settings *settings) {
    static const char *names[] = {"debug", "info", "warning", "error", "off"};
    const char *value = oam_setting(settings, "OAM_BRIDGE_LOG");
    int level = OAM_LOG_WARNING;
    if (value != NULL && *value) {
        char lower[16] = {0};
        for (size_t i = 0; i < sizeof lower - 1 && value[i]; i++) {
            lower[i] = (char)tolower((unsigned char)value[i]);
        }
        if (!strcmp(lower, "debug") || !strcmp(lower, "trace")) {
            level = OAM_LOG_DEBUG;
        } else if (!strcmp(lower, "info")) {
            level = OAM_LOG_INFO;
        } else if (!strcmp(lower, "warning") || !strcmp(lower, "warn")) {
            level = OAM_LOG_WARNING;
        } else if (!strcmp(lower, "error")) {
            level = OAM_LOG_ERROR;
        } else if (!strcmp(lower, "off") || !strcmp(lower, "none") || !strcmp(lower, "quiet")) {
            level = OAM_LOG_OFF;
        } else {
            g_log_level = OAM_LOG_WARNING;
            oam_log(OAM_LOG_WARNING, "OAM_BRIDGE_LOG=%s is not a level (debug, info, warning, error, off); using warning",
                    value);
        }
    }
    g_log_level = level;
    return names[level];
}

void oam_log(int level, const char *format, ...) {
    static const char *names[] = {"debug", "info", "warning", "error"};
    if (level < g_log_level || g_log_level == OAM_LOG_OFF || level >= OAM_LOG_OFF) {
        return;
    }
    char message[2048];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    /* One fprintf per line so that lines of concurrent threads do not interleave. */
    fprintf(stderr, "oam ffi %s: %s\n", names[level], message);
    fflush(stderr);
}

int oam_jvm_report_exception(JNIEnv *env, const char *what) {
    if (!(*env)->ExceptionCheck(env)) {
        return 0;
    }
    jthrowable error = (*env)->ExceptionOccurred(env);
    (*env)->ExceptionClear(env);
    char text[1024] = "unknown exception";
    jclass object = (*env)->FindClass(env, "java/lang/Object");
    if (object != NULL && error != NULL) {
        jmethodID to_string = (*env)->GetMethodID(env, object, "toString", "()Ljava/lang/String;");
        jstring description = to_string ? (jstring)(*env)->CallObjectMethod(env, error, to_string) : NULL;
        if (description != NULL && !(*env)->ExceptionCheck(env)) {
            const char *chars = (*env)->GetStringUTFChars(env, description, NULL);
            if (chars != NULL) {
                snprintf(text, sizeof text, "%s", chars);
                (*env)->ReleaseStringUTFChars(env, description, chars);
            }
        }
        (*env)->ExceptionClear(env);
        if (description) {
            (*env)->DeleteLocalRef(env, description);
        }
    }
    if (object) {
        (*env)->DeleteLocalRef(env, object);
    }
    if (error) {
        (*env)->DeleteLocalRef(env, error);
    }
    oam_log(OAM_LOG_ERROR, "%s: %s", what, text);
    return 1;
}

/* ---- finding a JDK ------------------------------------------------------------------------ */

/* The feature version from <home>/release (JAVA_VERSION="21.0.2" → 21, "1.8.0" → 8), or 0. */
static int java_major(const char *home) {
    char path[OAM_PATH_MAX];
    path_join(path, sizeof path, home, "release");
    FILE *file = fopen(path, "r");
    if (file == NULL) {
        return 0;
    }
    char line[512];
    int major = 0;
    while (fgets(line, sizeof line, file) != NULL) {
        if (strncmp(line, "JAVA_VERSION=", 13) == 0) {
            const char *p = line + 13;
            if (*p == '"') {
                p++;
            }
            major = atoi(p);
            if (major == 1) {
                const char *dot = strchr(p, '.');
                major = dot ? atoi(dot + 1) : 1;
            }
            break;
        }
    }
    fclose(file);
    return major;
}

/* Finds the JVM library under a Java home; returns 1 and fills out when found. */
static int jvm_library_in(const char *home, char *out, size_t size) {
    static const char *relative[] = {
#if defined(_WIN32)
        "bin\\server\\jvm.dll", "bin\\client\\jvm.dll", "jre\\bin\\server\\jvm.dll",
#elif defined(__APPLE__)
        "lib/server/libjvm.dylib", "lib/client/libjvm.dylib", "jre/lib/server/libjvm.dylib",
#else
        "lib/server/libjvm.so", "lib/client/libjvm.so", "lib/zero/libjvm.so", "jre/lib/server/libjvm.so",
#endif
    };
    for (size_t i = 0; i < sizeof relative / sizeof relative[0]; i++) {
        path_join(out, size, home, relative[i]);
        if (file_exists(out)) {
            return 1;
        }
    }
    return 0;
}

typedef struct {
    int best_major;
    char best_home[OAM_PATH_MAX];
    char best_library[OAM_PATH_MAX];
} jdk_search;

static void consider_home(const char *home, jdk_search *search) {
    char library[OAM_PATH_MAX];
    int major = java_major(home);
    if (major < OAM_MIN_JAVA || !jvm_library_in(home, library, sizeof library)) {
        if (major > 0) {
            oam_log(OAM_LOG_DEBUG, "skipping %s (Java %d%s)", home, major,
                    major < OAM_MIN_JAVA ? ", older than 21" : ", no JVM library");
        }
        return;
    }
    oam_log(OAM_LOG_DEBUG, "found Java %d at %s", major, home);
    if (major > search->best_major) {
        search->best_major = major;
        snprintf(search->best_home, sizeof search->best_home, "%s", home);
        snprintf(search->best_library, sizeof search->best_library, "%s", library);
    }
}

static void visit_candidate(const char *dir, const char *name, void *context) {
    char home[OAM_PATH_MAX];
    path_join(home, sizeof home, dir, name);
    if (!dir_exists(home)) {
        return;
    }
    char mac_home[OAM_PATH_MAX];
    path_join(mac_home, sizeof mac_home, home, "Contents/Home"); /* macOS bundles */
    consider_home(dir_exists(mac_home) ? mac_home : home, (jdk_search *)context);
}

static void search_directories(const char *list, jdk_search *search) {
    char copy[8192];
    snprintf(copy, sizeof copy, "%s", list);
    char *start = copy;
    while (*start) {
        char *end = start;
#if defined(_WIN32)
        while (*end && *end != ';') {
            end++;
        }
#else
        while (*end && *end != ':' && !isspace((unsigned char)*end)) {
            end++;
        }
#endif
        char saved = *end;
        *end = 0;
        if (*start) {
            list_directory(start, visit_candidate, search);
        }
        if (!saved) {
            break;
        }
        start = end + 1;
    }
}

static void default_directories(char *out, size_t size) {
    const char *home = getenv("HOME");
#if defined(_WIN32)
    const char *program_files = getenv("ProgramFiles");
    const char *profile = getenv("USERPROFILE");
    if (program_files == NULL) {
        program_files = "C:\\Program Files";
    }
    snprintf(out, size,
             "%s\\Java;%s\\Eclipse Adoptium;%s\\Microsoft;%s\\Zulu;%s\\Amazon Corretto;%s\\BellSoft;%s\\OpenJDK;"
             "%s\\.jdks",
             program_files, program_files, program_files, program_files, program_files, program_files, program_files,
             profile ? profile : "C:\\");
    (void)home;
#elif defined(__APPLE__)
    snprintf(out, size,
             "/Library/Java/JavaVirtualMachines:%s/Library/Java/JavaVirtualMachines:/opt/homebrew/opt:/usr/local/opt:"
             "%s/.sdkman/candidates/java",
             home ? home : "/nonexistent", home ? home : "/nonexistent");
#else
    snprintf(out, size,
             "/usr/lib/jvm:/usr/lib64/jvm:/usr/java:/usr/local/lib/jvm:/opt/java:/opt/jdk:/opt/jdks:"
             "%s/.sdkman/candidates/java:%s/.jdks",
             home ? home : "/nonexistent", home ? home : "/nonexistent");
#endif
}

/* Picks the JVM library to load; explains on stderr and returns 0 when there is none. */

static int find_jvm_library(const oam_settings *settings, char *library, size_t size) {
    const char *explicit_home = oam_setting(settings, "OAM_JAVA_HOME");
    if (explicit_home != NULL && *explicit_home) {
        int major = java_major(explicit_home);
        if (!dir_exists(explicit_home)) {
            oam_log(OAM_LOG_ERROR, "OAM_JAVA_HOME=%s is not a directory", explicit_home);
            return 0;
        }
        if (major > 0 && major < OAM_MIN_JAVA) {
            oam_log(OAM_LOG_ERROR, "OAM_JAVA_HOME=%s is Java %d; the bridge needs Java %d or newer", explicit_home, major,
                    OAM_MIN_JAVA);
            return 0;
        }
        if (!jvm_library_in(explicit_home, library, size)) {
            oam_log(OAM_LOG_ERROR, "OAM_JAVA_HOME=%s has no %s (expected under lib/server)", explicit_home,
                    OAM_JVM_LIBRARY);
            return 0;
        }
        return 1;
    }
    /* A release archive's own runtime: <dir>/../runtime beside the library's <dir> (oam-VERSION/lib). */
    char own[OAM_PATH_MAX], runtime[OAM_PATH_MAX];
    if (library_directory(own, sizeof own)) {
        path_join(runtime, sizeof runtime, own, ".." OAM_PATH_SEP_STR "runtime");
        if (runtime[0] && java_major(runtime) >= OAM_MIN_JAVA && jvm_library_in(runtime, library, size)) {
            oam_log(OAM_LOG_DEBUG, "using the runtime beside the library: %s", runtime);
            return 1;
        }
    }
    const char *java_home = getenv("JAVA_HOME");
    if (java_home != NULL && *java_home) {
        int major = java_major(java_home);
        if (major >= OAM_MIN_JAVA && jvm_library_in(java_home, library, size)) {
            return 1;
        }
        oam_log(OAM_LOG_INFO, "JAVA_HOME=%s is not a Java %d or newer with a JVM library; looking elsewhere", java_home,
                OAM_MIN_JAVA);
    }
    jdk_search search;
    memset(&search, 0, sizeof search);
    char defaults[8192];
    const char *dirs = getenv("OAM_JVM_DIRS");
    if (dirs == NULL || !*dirs) {
        default_directories(defaults, sizeof defaults);
        dirs = defaults;
    }
    search_directories(dirs, &search);
    if (search.best_major == 0) {
        oam_log(OAM_LOG_ERROR,
                "no Java %d or newer was found. Looked at javaHome and OAM_JAVA_HOME (unset), a runtime beside the library, "
                "JAVA_HOME (%s) and the JDKs under %s. Install a JDK %d+ or set javaHome (or OAM_JAVA_HOME) to one.",
                OAM_MIN_JAVA, java_home && *java_home ? java_home : "unset", dirs, OAM_MIN_JAVA);
        return 0;
    }
    snprintf(library, size, "%s", search.best_library);
    return 1;
}

/* ---- the classpath ------------------------------------------------------------------------ */

/* OAM_CLASSPATH, or oam.jar next to this library. Explains and returns 0 when missing. */
static int find_classpath(const oam_settings *settings, char *out, size_t size) {
    const char *explicit_path = oam_setting(settings, "OAM_CLASSPATH");
    if (explicit_path != NULL && *explicit_path) {
        /* Every entry must exist: a typo would otherwise surface as a confusing class error. */
        char copy[OAM_PATH_MAX * 2];
        snprintf(copy, sizeof copy, "%s", explicit_path);
        char *start = copy;
        for (;;) {
            char *end = strchr(start, OAM_LIST_SEP);
            if (end) {
                *end = 0;
            }
            if (*start && !file_exists(start) && !dir_exists(start)) {
                oam_log(OAM_LOG_ERROR, "OAM_CLASSPATH names %s, which does not exist", start);
                return 0;
            }
            if (!end) {
                break;
            }
            start = end + 1;
        }
        snprintf(out, size, "%s", explicit_path);
        return 1;
    }
    char dir[OAM_PATH_MAX];
    if (!library_directory(dir, sizeof dir)) {
        oam_log(OAM_LOG_ERROR, "cannot tell where this library was loaded from; set OAM_CLASSPATH to the oam.jar");
        return 0;
    }
    path_join(out, size, dir, "oam.jar");
    if (!file_exists(out)) {
        oam_log(OAM_LOG_ERROR,
                "the engine's jar was not found: OAM_CLASSPATH is unset and there is no %s next to the library. "
                "Put oam.jar beside libOpenAppleModelsFFI or set OAM_CLASSPATH.",
                out);
        return 0;
    }
    return 1;
}

/* ---- starting or joining the JVM ---------------------------------------------------------- */

static oam_mutex g_lock = OAM_MUTEX_INIT; /* guards everything below */
static oam_java g_java;
static int g_ready;
static int g_creation_failed; /* JNI_CreateJavaVM failed: HotSpot cannot try again in this process */
static int g_owns_jvm;        /* this library created the JVM */

static JavaVM *running_vm(created_vms_fn created) {
    JavaVM *vms[1];
    jsize count = 0;
    if (created != NULL && created(vms, 1, &count) == JNI_OK && count > 0) {
        return vms[0];
    }
    return NULL;
}

static created_vms_fn loaded_created_vms(void) {
#if defined(_WIN32)
    HMODULE jvm = GetModuleHandleA("jvm.dll");
    return jvm ? (created_vms_fn)(void *)GetProcAddress(jvm, "JNI_GetCreatedJavaVMs") : NULL;
#else
    created_vms_fn found = (created_vms_fn)dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
    if (found == NULL) {
        void *jvm = dlopen(OAM_JVM_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
        if (jvm != NULL) {
            found = (created_vms_fn)dlsym(jvm, "JNI_GetCreatedJavaVMs");
        }
    }
    return found;
#endif
}

/* ---- process hygiene for native model code (llama.cpp) ------------------------------------ */

/*
 * ggml forks gdb on an assert and prints the backtrace on the process's stdout unless
 * GGML_NO_BACKTRACE is set; in a game that stdout may be the game's own (or a protocol). Set it
 * before the JVM starts (so the JVM's System.getenv sees it too), and never override a value the
 * host chose. Also done when the library joins a JVM the host runs: the bridge may load ggml into
 * it later (the llama backend loads it when a llama model is first created).
 */
static void no_native_backtraces(void) {
    if (getenv("GGML_NO_BACKTRACE") != NULL) {
        return;
    }
#if defined(_WIN32)
    _putenv_s("GGML_NO_BACKTRACE", "1");
#else
    setenv("GGML_NO_BACKTRACE", "1", 0);
#endif
    oam_log(OAM_LOG_DEBUG, "set GGML_NO_BACKTRACE=1 in this process");
}

static int make_dir(const char *path) {
#if defined(_WIN32)
    return CreateDirectoryA(path, NULL) || GetLastError() == ERROR_ALREADY_EXISTS;
#else
    return mkdir(path, 0700) == 0 || errno == EEXIST;
#endif
}

/*
 * "-XX:ErrorFile=<cache>/oam/hs_err_pid%p.log" into out, so that a JVM crash report never lands in
 * the game's working directory: <cache> is XDG_CACHE_HOME or ~/.cache (Linux), ~/Library/Caches
 * (macOS), %LOCALAPPDATA% (Windows). Returns 0 (and the JVM keeps its default) when the folder
 * cannot be made. An -XX:ErrorFile in OAM_JVM_OPTIONS comes later and wins.
 */
static int error_file_option(char *out, size_t size) {
    char base[OAM_PATH_MAX] = "";
    char dir[OAM_PATH_MAX];
#if defined(_WIN32)
    const char *local = getenv("LOCALAPPDATA");
    if (local != NULL && *local) {
        snprintf(base, sizeof base, "%s", local);
    }
#else
    const char *home = getenv("HOME");
#  if defined(__APPLE__)
    if (home != NULL && *home) {
        path_join(base, sizeof base, home, "Library/Caches");
    }
#  else
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg != NULL && *xdg == '/') {
        snprintf(base, sizeof base, "%s", xdg);
    } else if (home != NULL && *home) {
        path_join(base, sizeof base, home, ".cache");
    }
#  endif
#endif
    if (!base[0]) {
        return 0;
    }
    make_dir(base); /* one level only: a missing home is not ours to make */
    path_join(dir, sizeof dir, base, "oam");
    if (!dir[0] || !make_dir(dir)) {
        oam_log(OAM_LOG_DEBUG, "cannot make %s; JVM crash reports go to the JVM's default place", dir);
        return 0;
    }
    int n = snprintf(out, size, "-XX:ErrorFile=%s%shs_err_pid%%p.log", dir, OAM_PATH_SEP_STR);
    return n > 0 && (size_t)n < size;
}

/* Splits OAM_JVM_OPTIONS at whitespace into options[] (pointers into storage). */
static int extra_options(const oam_settings *settings, char *storage, size_t size, JavaVMOption *options, int max) {
    const char *value = oam_setting(settings, "OAM_JVM_OPTIONS");
    int count = 0;
    if (value == NULL) {
        return 0;
    }
    snprintf(storage, size, "%s", value);
    char *p = storage;
    while (*p && count < max) {
        while (*p && isspace((unsigned char)*p)) {
            p++;
        }
        if (!*p) {
            break;
        }
        options[count].optionString = p;
        options[count].extraInfo = NULL;
        count++;
        while (*p && !isspace((unsigned char)*p)) {
            p++;
        }
        if (*p) {
            *p++ = 0;
        }
    }
    return count;
}

static JavaVM *start_vm(const oam_settings *settings, const char *classpath, JNIEnv **env) {
    no_native_backtraces(); /* before the JVM starts, and before a joined JVM ever loads ggml */
    created_vms_fn created = loaded_created_vms();
    JavaVM *vm = running_vm(created);
    if (vm != NULL) {
        oam_log(OAM_LOG_INFO, "joining the JVM that already runs in this process");
        return vm;
    }
    if (g_creation_failed) {
        oam_log(OAM_LOG_ERROR, "the JVM failed to start earlier in this process, and a JVM cannot be started twice");
        return NULL;
    }
    char library_path[OAM_PATH_MAX];
    if (!find_jvm_library(settings, library_path, sizeof library_path)) {
        return NULL;
    }
    void *library = library_open(library_path);
    if (library == NULL) {
        char reason[1024];
        library_error(reason, sizeof reason);
        oam_log(OAM_LOG_ERROR, "cannot load %s: %s", library_path, reason);
        return NULL;
    }
    created = (created_vms_fn)library_symbol(library, "JNI_GetCreatedJavaVMs");
    create_vm_fn create = (create_vm_fn)library_symbol(library, "JNI_CreateJavaVM");
    if (created == NULL || create == NULL) {
        oam_log(OAM_LOG_ERROR, "%s is not a JVM library (no JNI_CreateJavaVM)", library_path);
        return NULL;
    }
    vm = running_vm(created); /* someone else may have loaded this very library privately */
    if (vm != NULL) {
        oam_log(OAM_LOG_INFO, "joining the JVM that already runs in this process");
        return vm;
    }
    static char class_path_option[OAM_PATH_MAX * 2 + 32];
    static char error_file[OAM_PATH_MAX + 64];
    static char extra_storage[8192];
    snprintf(class_path_option, sizeof class_path_option, "-Djava.class.path=%s", classpath);
    JavaVMOption options[64];
    int count = 0;
    options[count++].optionString = class_path_option;
    /* Leave SIGINT, SIGTERM, SIGHUP and SIGQUIT to the host. */
    options[count++].optionString = "-Xrs";
    /* The entry class declares a native method, and model backends load native code (JNI, FFM):
       allow both without a warning on newer JDKs (and before later JDKs refuse). */
    options[count++].optionString = "--enable-native-access=ALL-UNNAMED";
    if (error_file_option(error_file, sizeof error_file)) {
        options[count++].optionString = error_file;
    }
    for (int i = 0; i < count; i++) {
        options[i].extraInfo = NULL;
    }
    count += extra_options(settings, extra_storage, sizeof extra_storage, options + count, 60);
    JavaVMInitArgs args;
    args.version = JNI_VERSION_10;
    args.nOptions = count;
    args.options = options;
    args.ignoreUnrecognized = JNI_FALSE;
    oam_log(OAM_LOG_INFO, "starting the JVM %s with classpath %s", library_path, classpath);
    jint rc = create(&vm, (void **)env, &args);
    if (rc != JNI_OK) {
        g_creation_failed = 1;
        oam_log(OAM_LOG_ERROR, "JNI_CreateJavaVM failed with %d (%s); check OAM_JVM_OPTIONS and the messages above", (int)rc,
                rc == JNI_EVERSION ? "unsupported JNI version" : rc == JNI_ENOMEM ? "out of memory"
                : rc == JNI_EEXIST ? "a JVM already exists" : rc == JNI_EINVAL ? "invalid option" : "error");
        return NULL;
    }
    g_owns_jvm = 1;
    return vm;
}

/* Loads the entry class through a private class loader over the classpath (for a joined JVM). */
static jclass load_with_class_loader(JNIEnv *env, const char *classpath) {
    jclass file_class = (*env)->FindClass(env, "java/io/File");
    jclass uri_class = (*env)->FindClass(env, "java/net/URI");
    jclass url_class = (*env)->FindClass(env, "java/net/URL");
    jclass loader_class = (*env)->FindClass(env, "java/lang/ClassLoader");
    jclass url_loader_class = (*env)->FindClass(env, "java/net/URLClassLoader");
    jclass class_class = (*env)->FindClass(env, "java/lang/Class");
    if (!file_class || !uri_class || !url_class || !loader_class || !url_loader_class || !class_class) {
        return NULL;
    }
    jmethodID file_init = (*env)->GetMethodID(env, file_class, "<init>", "(Ljava/lang/String;)V");
    jmethodID to_uri = (*env)->GetMethodID(env, file_class, "toURI", "()Ljava/net/URI;");
    jmethodID to_url = (*env)->GetMethodID(env, uri_class, "toURL", "()Ljava/net/URL;");
    jmethodID platform = (*env)->GetStaticMethodID(env, loader_class, "getPlatformClassLoader", "()Ljava/lang/ClassLoader;");
    jmethodID loader_init = (*env)->GetMethodID(env, url_loader_class, "<init>",
                                                "(Ljava/lang/String;[Ljava/net/URL;Ljava/lang/ClassLoader;)V");
    jmethodID for_name = (*env)->GetStaticMethodID(env, class_class, "forName",
                                                   "(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;");
    if (!file_init || !to_uri || !to_url || !platform || !loader_init || !for_name) {
        return NULL;
    }
    int entries = 1;
    for (const char *p = classpath; *p; p++) {
        entries += *p == OAM_LIST_SEP;
    }
    jobjectArray urls = (*env)->NewObjectArray(env, entries, url_class, NULL);
    if (urls == NULL) {
        return NULL;
    }
    char copy[OAM_PATH_MAX * 2];
    snprintf(copy, sizeof copy, "%s", classpath);
    char *start = copy;
    for (int i = 0; i < entries; i++) {
        char *end = strchr(start, OAM_LIST_SEP);
        if (end) {
            *end = 0;
        }
        jstring path = (*env)->NewStringUTF(env, start);
        jobject file = path ? (*env)->NewObject(env, file_class, file_init, path) : NULL;
        jobject uri = file ? (*env)->CallObjectMethod(env, file, to_uri) : NULL;
        jobject url = uri ? (*env)->CallObjectMethod(env, uri, to_url) : NULL;
        if (url == NULL || (*env)->ExceptionCheck(env)) {
            return NULL;
        }
        (*env)->SetObjectArrayElement(env, urls, i, url);
        start = end ? end + 1 : start;
    }
    /* The platform loader as parent: the host's own classes (another Jackson…) cannot interfere. */
    jobject parent = (*env)->CallStaticObjectMethod(env, loader_class, platform);
    jstring name = (*env)->NewStringUTF(env, "oam");
    jobject loader = parent ? (*env)->NewObject(env, url_loader_class, loader_init, name, urls, parent) : NULL;
    jstring class_name = (*env)->NewStringUTF(env, "dev.oam.ffi.NativeBridge");
    if (loader == NULL || class_name == NULL || (*env)->ExceptionCheck(env)) {
        return NULL;
    }
    return (jclass)(*env)->CallStaticObjectMethod(env, class_class, for_name, class_name, JNI_TRUE, loader);
}

static int load_entry_class_in_frame(JNIEnv *env, const char *classpath) {
    jclass entry = (*env)->FindClass(env, OAM_ENTRY_CLASS);
    if (entry == NULL) {
        (*env)->ExceptionClear(env);
        oam_log(OAM_LOG_DEBUG, "the JVM's class path has no %s; loading it from %s", OAM_ENTRY_CLASS, classpath);
        entry = load_with_class_loader(env, classpath);
    }
    if (entry == NULL || (*env)->ExceptionCheck(env)) {
        if (!oam_jvm_report_exception(env, "cannot load the engine's entry class dev.oam.ffi.NativeBridge")) {
            oam_log(OAM_LOG_ERROR, "cannot load the engine's entry class dev.oam.ffi.NativeBridge from %s", classpath);
        }
        oam_log(OAM_LOG_ERROR, "the classpath must hold the oam.jar of this version, and the JVM must be %d or newer",
                OAM_MIN_JAVA);
        return 0;
    }
    JNINativeMethod natives[] = {{"deliver", "(J[B)V", (void *)&oam_native_deliver}};
    if ((*env)->RegisterNatives(env, entry, natives, 1) != JNI_OK) {
        oam_jvm_report_exception(env, "cannot register the native callback");
        return 0;
    }
    g_java.create = (*env)->GetStaticMethodID(env, entry, "create", "(J[Ljava/lang/String;)Ldev/oam/ffi/NativeBridge;");
    g_java.send = (*env)->GetMethodID(env, entry, "send", "([B)V");
    g_java.call_blocking = (*env)->GetMethodID(env, entry, "callBlocking", "([BJ)[B");
    g_java.destroy = (*env)->GetMethodID(env, entry, "destroy", "(Z)V");
    if (!g_java.create || !g_java.send || !g_java.call_blocking || !g_java.destroy) {
        oam_jvm_report_exception(env, "the entry class does not match this library");
        return 0;
    }
    g_java.entry = (jclass)(*env)->NewGlobalRef(env, entry);
    return g_java.entry != NULL;
}

static int load_entry_class(JNIEnv *env, const char *classpath) {
    if ((*env)->PushLocalFrame(env, 64) != JNI_OK) {
        oam_jvm_report_exception(env, "out of memory in the JVM");
        return 0;
    }
    int ok = load_entry_class_in_frame(env, classpath);
    (*env)->PopLocalFrame(env, NULL);
    return ok;
}

const oam_java *oam_jvm_ensure(const oam_settings *settings, int *owns_jvm) {
    oam_mutex_lock(&g_lock);
    if (g_ready) {
        *owns_jvm = g_owns_jvm;
        oam_mutex_unlock(&g_lock);
        return &g_java;
    }
    char classpath[OAM_PATH_MAX * 2];
    const oam_java *result = NULL;
    if (find_classpath(settings, classpath, sizeof classpath)) {
        JNIEnv *env = NULL;
        JavaVM *vm = start_vm(settings, classpath, &env);
        if (vm != NULL) {
            g_java.vm = vm;
            if (env == NULL) {
                env = oam_jvm_env(&g_java);
            } else {
                detach_when_thread_ends(vm); /* JNI_CreateJavaVM attached this thread */
            }
            if (env != NULL && load_entry_class(env, classpath)) {
                g_ready = 1;
                result = &g_java;
                *owns_jvm = g_owns_jvm;
            }
        }
    }
    oam_mutex_unlock(&g_lock);
    return result;
}

/*
 * Threads of the host are attached on their first call and stay attached (attaching costs tens of
 * microseconds, too much for every send of a game loop). A thread-exit hook detaches them, so a
 * thread that ends leaves nothing behind in the JVM. HotSpot supports detaching from such a
 * hook: it keeps its own thread pointer valid while thread-local destructors run.
 */
#if defined(_WIN32)
static DWORD g_detach_slot = FLS_OUT_OF_INDEXES;
static INIT_ONCE g_detach_once = INIT_ONCE_STATIC_INIT;

static void WINAPI detach_at_exit(void *value) {
    JavaVM *vm = (JavaVM *)value;
    if (vm != NULL) {
        (*vm)->DetachCurrentThread(vm);
    }
}

static BOOL CALLBACK make_detach_slot(PINIT_ONCE once, void *parameter, void **context) {
    (void)once;
    (void)parameter;
    (void)context;
    g_detach_slot = FlsAlloc(detach_at_exit);
    return TRUE;
}

static void detach_when_thread_ends(JavaVM *vm) {
    InitOnceExecuteOnce(&g_detach_once, make_detach_slot, NULL, NULL);
    if (g_detach_slot != FLS_OUT_OF_INDEXES) {
        FlsSetValue(g_detach_slot, vm);
    }
}
#else
static pthread_key_t g_detach_key;
static pthread_once_t g_detach_once = PTHREAD_ONCE_INIT;
static int g_detach_key_ok;

static void detach_at_exit(void *value) {
    JavaVM *vm = (JavaVM *)value;
    if (vm != NULL) {
        (*vm)->DetachCurrentThread(vm);
    }
}

static void make_detach_key(void) {
    g_detach_key_ok = pthread_key_create(&g_detach_key, detach_at_exit) == 0;
}

static void detach_when_thread_ends(JavaVM *vm) {
    pthread_once(&g_detach_once, make_detach_key);
    if (g_detach_key_ok) {
        pthread_setspecific(g_detach_key, vm);
    }
}
#endif

JNIEnv *oam_jvm_env(const oam_java *java) {
    JNIEnv *env = NULL;
    jint rc = (*java->vm)->GetEnv(java->vm, (void **)&env, JNI_VERSION_10);
    if (rc == JNI_OK) {
        return env;
    }
    if (rc == JNI_EDETACHED) {
        JavaVMAttachArgs args;
        args.version = JNI_VERSION_10;
        args.name = NULL;
        args.group = NULL;
        if ((*java->vm)->AttachCurrentThreadAsDaemon(java->vm, (void **)&env, &args) == JNI_OK) {
            detach_when_thread_ends(java->vm);
            return env;
        }
    }
    oam_log(OAM_LOG_ERROR, "cannot attach this thread to the JVM (error %d)", (int)rc);
    return NULL;
}
