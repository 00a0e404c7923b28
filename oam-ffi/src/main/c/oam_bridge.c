/*
 * The six functions of open_apple_models.h, forwarding to dev.oam.ffi.NativeBridge.
 *
 * Lifetime of a bridge: the Java side calls oam_native_deliver() from its single writer thread
 * with the bridge's address as handle, and stops doing so once NativeBridge.destroy() has run
 * (it clears the handle under the same lock it holds while delivering). Before telling Java, the C
 * side marks the bridge destroyed and waits for a callback in progress, so no callback starts or
 * runs after oam_bridge_destroy() returns. When the callback itself destroys its bridge, the memory
 * is released by oam_native_deliver() once the callback has returned.
 */
#define OAM_BUILDING_LIBRARY 1 /* exports, not imports, on Windows */
#include "open_apple_models.h"
#include "oam_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef OAM_VERSION
#define OAM_VERSION "0.0.0"
#endif

/* Lines up to this size keep their delivery buffer between callbacks. */
#define OAM_KEEP_BUFFER_BYTES (1024 * 1024)

struct oam_bridge {
    oam_mutex lock;
    oam_cond idle;                  /* broadcast when a callback returns */
    oam_callback callback;
    void *user_data;
    const oam_java *java;
    jobject peer;                   /* global ref to the Java NativeBridge */
    int destroyed;                  /* guarded by lock */
    int in_callback;                /* guarded by lock */
    int free_after_callback;        /* guarded by lock: destroyed from inside its callback */
    oam_thread_id callback_thread;  /* guarded by lock; meaningful while in_callback */
    char *buffer;                   /* the callback's line; touched only by the writer thread */
    size_t capacity;
};

static void free_bridge(oam_bridge *bridge) {
    free(bridge->buffer);
    oam_cond_destroy(&bridge->idle);
    oam_mutex_destroy(&bridge->lock);
    free(bridge);
}

static char *copy_string(const char *text, size_t length) {
    char *copy = (char *)malloc(length + 1);
    if (copy != NULL) {
        memcpy(copy, text, length);
        copy[length] = 0;
    }
    return copy;
}

static char *error_line(int code, const char *name, const char *message) {
    char line[512];
    snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":%d,\"message\":\"%s\",\"data\":{\"code\":\"%s\"}}}",
             code, message, name);
    return copy_string(line, strlen(line));
}

/* Well-formed UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing above U+10FFFF. */
static int utf8_valid(const unsigned char *text, size_t length) {
    size_t i = 0;
    while (i < length) {
        unsigned char lead = text[i];
        if (lead < 0x80) {
            i++;
            continue;
        }
        size_t need;
        uint32_t code_point;
        if (lead >= 0xC2 && lead <= 0xDF) {
            need = 1;
            code_point = lead & 0x1F;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            need = 2;
            code_point = lead & 0x0F;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            need = 3;
            code_point = lead & 0x07;
        } else {
            return 0;
        }
        if (length - i <= need) {
            return 0;
        }
        for (size_t k = 1; k <= need; k++) {
            unsigned char next = text[i + k];
            if ((next & 0xC0) != 0x80) {
                return 0;
            }
            code_point = (code_point << 6) | (next & 0x3F);
        }
        if (need == 2 && (code_point < 0x800 || (code_point >= 0xD800 && code_point <= 0xDFFF))) {
            return 0;
        }
        if (need == 3 && (code_point < 0x10000 || code_point > 0x10FFFF)) {
            return 0;
        }
        i += need + 1;
    }
    return 1;
}

static int inside_own_callback(oam_bridge *bridge) {
    oam_mutex_lock(&bridge->lock);
    int inside = bridge->in_callback && oam_thread_equal(bridge->callback_thread, oam_thread_self());
    oam_mutex_unlock(&bridge->lock);
    return inside;
}

/* ---- the ABI ------------------------------------------------------------------------------ */

OAM_API const char *oam_version(void) {
    return OAM_VERSION;
}

/*
 * A Java string from UTF-8 bytes (decoded here: NewStringUTF expects modified UTF-8, which differs for
 * characters beyond U+FFFF). Malformed bytes become U+FFFD. NULL when the JVM is out of memory.
 */
static jstring java_string_from_utf8(JNIEnv *env, const char *text) {
    size_t length = strlen(text);
    jchar *units = (jchar *)malloc((length + 1) * 2 * sizeof(jchar));
    if (units == NULL) {
        return NULL;
    }
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)text;
    size_t i = 0;
    while (i < length) {
        uint32_t code_point = 0xFFFD;
        size_t used = 1;
        unsigned char lead = p[i];
        size_t need = lead < 0x80 ? 0 : lead >= 0xC2 && lead <= 0xDF ? 1 : lead >= 0xE0 && lead <= 0xEF ? 2
                      : lead >= 0xF0 && lead <= 0xF4 ? 3 : 4;
        if (need == 0) {
            code_point = lead;
        } else if (need <= 3 && length - i > need && utf8_valid(p + i, need + 1)) {
            code_point = lead & (need == 1 ? 0x1F : need == 2 ? 0x0F : 0x07);
            for (size_t k = 1; k <= need; k++) {
                code_point = (code_point << 6) | (p[i + k] & 0x3F);
            }
            used = need + 1;
        }
        if (code_point >= 0x10000) {
            code_point -= 0x10000;
            units[n++] = (jchar)(0xD800 + (code_point >> 10));
            units[n++] = (jchar)(0xDC00 + (code_point & 0x3FF));
        } else {
            units[n++] = (jchar)code_point;
        }
        i += used;
    }
    jstring string = (*env)->NewString(env, units, (jsize)n);
    free(units);
    return string;
}

/*
 * "NAME=value" for every setting the Java side reads (see NativeBridge.configure): the bridge's own
 * and the system model's, from the environment at the time of the call.
 */
static jobjectArray settings_array(JNIEnv *env, const oam_settings *settings, const char *log_level, int owns_jvm) {
    static const char *names[] = {"OAM_BRIDGE_MAX_SESSIONS", "OAM_BRIDGE_TOOL_TIMEOUT", "OAM_BRIDGE_SCRIPTED_MODELS",
                                  "OAM_MODEL", "OAM_MODEL_NAME", "OAM_API_KEY", "OAM_MODEL_CACHE", "HF_ENDPOINT",
                                  "HF_TOKEN", "OAM_PYPI_ENDPOINT", "OAM_CACHE_DIR", "XDG_CACHE_HOME"};
    enum { MAX_SETTINGS = 2 + sizeof names / sizeof names[0] };
    char *entries[MAX_SETTINGS];
    int count = 0;
    size_t level_size = strlen(log_level) + 16;
    entries[count] = (char *)malloc(level_size);
    if (entries[count] != NULL) {
        snprintf(entries[count++], level_size, "OAM_BRIDGE_LOG=%s", log_level);
    }
    if (owns_jvm) {
        entries[count++] = copy_string("OAM_FFI_OWNS_JVM=1", strlen("OAM_FFI_OWNS_JVM=1"));
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *value = oam_setting(settings, names[i]);
        if (value != NULL && *value) {
            size_t size = strlen(names[i]) + strlen(value) + 2;
            entries[count] = (char *)malloc(size);
            if (entries[count] != NULL) {
                snprintf(entries[count++], size, "%s=%s", names[i], value);
            }
        }
    }
    jobjectArray array = NULL;
    jclass string_class = (*env)->FindClass(env, "java/lang/String");
    if (string_class != NULL) {
        array = (*env)->NewObjectArray(env, count, string_class, NULL);
    }
    for (int i = 0; i < count; i++) {
        if (array != NULL) {
            jstring entry = entries[i] != NULL ? java_string_from_utf8(env, entries[i]) : NULL;
            if (entry == NULL) {
                array = NULL;
            } else {
                (*env)->SetObjectArrayElement(env, array, i, entry);
                (*env)->DeleteLocalRef(env, entry);
            }
        }
        free(entries[i]);
    }
    return array;
}

/*
 * Every call from the host runs in a local frame of its own: host threads stay attached to the
 * JVM without Java frames, so a local reference that escaped would live as long as the thread.
 */
#define LOCAL_FRAME_CAPACITY 16

static oam_bridge *create_bridge(const oam_settings *settings, oam_callback callback, void *user_data) {
    const char *log_level = oam_log_configure(settings);
    if (callback == NULL) {
        oam_log(OAM_LOG_ERROR, "oam_bridge_create: the callback must not be NULL");
        return NULL;
    }
    int owns_jvm = 0;
    const oam_java *java = oam_jvm_ensure(settings, &owns_jvm);
    if (java == NULL) {
        return NULL;
    }
    JNIEnv *env = oam_jvm_env(java);
    if (env == NULL) {
        return NULL;
    }
    oam_bridge *bridge = (oam_bridge *)calloc(1, sizeof *bridge);
    if (bridge == NULL || (*env)->PushLocalFrame(env, LOCAL_FRAME_CAPACITY) != JNI_OK) {
        oam_jvm_report_exception(env, "oam_bridge_create: out of memory");
        oam_log(OAM_LOG_ERROR, "oam_bridge_create: out of memory");
        free(bridge);
        return NULL;
    }
    oam_mutex_init(&bridge->lock);
    oam_cond_init(&bridge->idle);
    bridge->callback = callback;
    bridge->user_data = user_data;
    bridge->java = java;
    jobjectArray array = settings_array(env, settings, log_level, owns_jvm);
    jobject peer = array == NULL ? NULL
        : (*env)->CallStaticObjectMethod(env, java->entry, java->create, (jlong)(intptr_t)bridge, array);
    int failed = oam_jvm_report_exception(env, "cannot create the bridge") || peer == NULL;
    if (!failed) {
        bridge->peer = (*env)->NewGlobalRef(env, peer);
        failed = bridge->peer == NULL;
    }
    (*env)->PopLocalFrame(env, NULL);
    if (failed) {
        oam_log(OAM_LOG_DEBUG, "oam_bridge_create failed");
        free_bridge(bridge);
        return NULL;
    }
    return bridge;
}

OAM_API oam_bridge *oam_bridge_create(oam_callback callback, void *user_data) {
    return create_bridge(NULL, callback, user_data);
}

OAM_API oam_bridge *oam_bridge_create_with_settings(const char *settings_json, oam_callback callback, void *user_data) {
    oam_settings settings;
    char error[512] = "";
    if (settings_json == NULL) {
        settings_json = "{}";
    }
    if (!oam_settings_parse(settings_json, &settings, error, sizeof error)) {
        oam_log_configure(NULL);
        oam_log(OAM_LOG_ERROR, "oam_bridge_create_with_settings: the settings are refused: %s", error);
        return NULL;
    }
    oam_bridge *bridge = create_bridge(&settings, callback, user_data);
    oam_settings_free(&settings);
    return bridge;
}

OAM_API int oam_bridge_send(oam_bridge *bridge, const char *line) {
    if (bridge == NULL || line == NULL) {
        return OAM_ERROR_INVALID_ARGUMENT;
    }
    size_t length = strlen(line);
    if (length > INT32_MAX) {
        return OAM_ERROR_INVALID_ARGUMENT;
    }
    if (!utf8_valid((const unsigned char *)line, length)) {
        return OAM_ERROR_INVALID_UTF8;
    }
    JNIEnv *env = oam_jvm_env(bridge->java);
    if (env == NULL) {
        return OAM_ERROR_INTERNAL;
    }
    if ((*env)->PushLocalFrame(env, LOCAL_FRAME_CAPACITY) != JNI_OK) {
        oam_jvm_report_exception(env, "oam_bridge_send: out of memory in the JVM");
        return OAM_ERROR_INTERNAL;
    }
    int rc = OAM_OK;
    jbyteArray bytes = (*env)->NewByteArray(env, (jsize)length);
    if (bytes == NULL) {
        oam_jvm_report_exception(env, "oam_bridge_send: out of memory in the JVM");
        rc = OAM_ERROR_INTERNAL;
    } else {
        (*env)->SetByteArrayRegion(env, bytes, 0, (jsize)length, (const jbyte *)line);
        (*env)->CallVoidMethod(env, bridge->peer, bridge->java->send, bytes);
        if (oam_jvm_report_exception(env, "oam_bridge_send failed")) {
            rc = OAM_ERROR_INTERNAL;
        }
    }
    (*env)->PopLocalFrame(env, NULL);
    return rc;
}

OAM_API char *oam_call_blocking(oam_bridge *bridge, const char *json, int32_t timeout_ms) {
    if (bridge == NULL || json == NULL) {
        return NULL;
    }
    if (inside_own_callback(bridge)) {
        oam_log(OAM_LOG_ERROR, "oam_call_blocking was called from inside the callback; use oam_bridge_send there");
        return error_line(-32600, "invalid_message",
                          "oam_call_blocking must not be called from inside the callback (it would wait for itself); "
                          "use oam_bridge_send.");
    }
    size_t length = strlen(json);
    if (length > INT32_MAX) {
        return error_line(-32600, "invalid_message", "The message is too long.");
    }
    if (!utf8_valid((const unsigned char *)json, length)) {
        return error_line(-32700, "parse_error", "Parse error: the message is not valid UTF-8.");
    }
    JNIEnv *env = oam_jvm_env(bridge->java);
    if (env == NULL) {
        return error_line(-32603, "internal_error", "Internal error: this thread could not be attached to the JVM.");
    }
    if ((*env)->PushLocalFrame(env, LOCAL_FRAME_CAPACITY) != JNI_OK) {
        oam_jvm_report_exception(env, "oam_call_blocking: out of memory in the JVM");
        return error_line(-32603, "internal_error", "Internal error: out of memory in the JVM.");
    }
    char *result = NULL;
    jbyteArray bytes = (*env)->NewByteArray(env, (jsize)length);
    if (bytes != NULL) {
        (*env)->SetByteArrayRegion(env, bytes, 0, (jsize)length, (const jbyte *)json);
        jbyteArray answer = (jbyteArray)(*env)->CallObjectMethod(env, bridge->peer, bridge->java->call_blocking, bytes,
                                                                (jlong)timeout_ms);
        if (answer != NULL && !(*env)->ExceptionCheck(env)) {
            jsize size = (*env)->GetArrayLength(env, answer);
            result = (char *)malloc((size_t)size + 1);
            if (result != NULL) {
                (*env)->GetByteArrayRegion(env, answer, 0, size, (jbyte *)result);
                result[size] = 0;
            }
        }
    }
    if (oam_jvm_report_exception(env, "oam_call_blocking failed") && result != NULL) {
        free(result);
        result = NULL;
    }
    (*env)->PopLocalFrame(env, NULL);
    if (result == NULL) {
        result = error_line(-32603, "internal_error", "Internal error: the call failed; see the bridge's log.");
    }
    return result;
}

OAM_API void oam_string_free(char *string) {
    free(string);
}

OAM_API void oam_bridge_destroy(oam_bridge *bridge) {
    if (bridge == NULL) {
        return;
    }
    oam_mutex_lock(&bridge->lock);
    int from_callback = bridge->in_callback && oam_thread_equal(bridge->callback_thread, oam_thread_self());
    bridge->destroyed = 1; /* no callback starts from now on */
    if (from_callback) {
        bridge->free_after_callback = 1;
    } else {
        while (bridge->in_callback) {
            oam_cond_wait(&bridge->idle, &bridge->lock);
        }
    }
    oam_mutex_unlock(&bridge->lock);

    JNIEnv *env = oam_jvm_env(bridge->java);
    if (env == NULL) {
        /* Java may still hold the handle, so the memory must stay; callbacks stay suppressed. */
        oam_log(OAM_LOG_ERROR, "oam_bridge_destroy: cannot reach the JVM; the bridge is abandoned, not freed");
        return;
    }
    (*env)->CallVoidMethod(env, bridge->peer, bridge->java->destroy, from_callback ? JNI_TRUE : JNI_FALSE);
    oam_jvm_report_exception(env, "oam_bridge_destroy");
    (*env)->DeleteGlobalRef(env, bridge->peer);
    bridge->peer = NULL;
    if (!from_callback) {
        free_bridge(bridge);
    }
}

/* ---- from Java ---------------------------------------------------------------------------- */

void JNICALL oam_native_deliver(JNIEnv *env, jclass cls, jlong handle, jbyteArray line) {
    (void)cls;
    oam_bridge *bridge = (oam_bridge *)(intptr_t)handle;
    if (bridge == NULL || line == NULL) {
        return;
    }
    jsize length = (*env)->GetArrayLength(env, line);
    oam_mutex_lock(&bridge->lock);
    if (bridge->destroyed) {
        oam_mutex_unlock(&bridge->lock);
        return;
    }
    bridge->in_callback = 1;
    bridge->callback_thread = oam_thread_self();
    oam_mutex_unlock(&bridge->lock);

    if ((size_t)length + 1 > bridge->capacity) {
        free(bridge->buffer);
        bridge->capacity = 0;
        bridge->buffer = (char *)malloc((size_t)length + 1);
        if (bridge->buffer != NULL) {
            bridge->capacity = (size_t)length + 1;
        }
    }
    if (bridge->buffer != NULL) {
        (*env)->GetByteArrayRegion(env, line, 0, length, (jbyte *)bridge->buffer);
        bridge->buffer[length] = 0;
        bridge->callback(bridge->buffer, bridge->user_data);
        if (bridge->capacity > OAM_KEEP_BUFFER_BYTES) {
            free(bridge->buffer);
            bridge->buffer = NULL;
            bridge->capacity = 0;
        }
    } else {
        oam_log(OAM_LOG_ERROR, "out of memory: a message of %ld bytes was dropped", (long)length);
    }

    oam_mutex_lock(&bridge->lock);
    bridge->in_callback = 0;
    int release = bridge->free_after_callback;
    oam_cond_broadcast(&bridge->idle);
    oam_mutex_unlock(&bridge->lock);
    if (release) {
        free_bridge(bridge);
    }
}
