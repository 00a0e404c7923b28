/*
 * The settings of oam_bridge_create_with_settings(): one flat JSON object whose members replace the
 * environment variables of the same meaning (a .NET host's Environment.SetEnvironmentVariable does not reach
 * the C runtime's getenv on Windows, and a game should not have to change its process environment at all).
 * A strict little parser: anything but a flat object of known names with values of the right type is refused
 * with a message naming the problem; nothing here ever reads past the terminating NUL.
 */
#define OAM_BUILDING_LIBRARY 1
#include "oam_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { KIND_STRING, KIND_NUMBER, KIND_BOOLEAN } value_kind;

static const struct {
    const char *name;     /* the JSON member */
    const char *variable; /* the environment variable it replaces */
    value_kind kind;
} known[] = {
    {"classPath", "OAM_CLASSPATH", KIND_STRING},
    {"javaHome", "OAM_JAVA_HOME", KIND_STRING},
    {"jvmOptions", "OAM_JVM_OPTIONS", KIND_STRING},
    {"logLevel", "OAM_BRIDGE_LOG", KIND_STRING},
    {"model", "OAM_MODEL", KIND_STRING},
    {"modelName", "OAM_MODEL_NAME", KIND_STRING},
    {"apiKey", "OAM_API_KEY", KIND_STRING},
    {"maxSessions", "OAM_BRIDGE_MAX_SESSIONS", KIND_NUMBER},
    {"toolTimeoutSeconds", "OAM_BRIDGE_TOOL_TIMEOUT", KIND_NUMBER},
    {"scriptedModels", "OAM_BRIDGE_SCRIPTED_MODELS", KIND_BOOLEAN},
};
#define KNOWN_COUNT (sizeof known / sizeof known[0])

typedef struct {
    const char *p;
    char *error;
    size_t error_size;
} parser;

static int fail(parser *in, const char *format, const char *detail) {
    snprintf(in->error, in->error_size, format, detail);
    return 0;
}

static void skip_space(parser *in) {
    while (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r') {
        in->p++;
    }
}

static int hex_digit(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int read_hex4(parser *in, unsigned *out) {
    unsigned value = 0;
    for (int i = 0; i < 4; i++) {
        int digit = hex_digit(in->p[i]);
        if (digit < 0) {
            return fail(in, "%s", "a \\u escape needs four hex digits");
        }
        value = value << 4 | (unsigned)digit;
    }
    in->p += 4;
    *out = value;
    return 1;
}

static size_t put_utf8(char *out, unsigned code) {
    if (code < 0x80) {
        out[0] = (char)code;
        return 1;
    }
    if (code < 0x800) {
        out[0] = (char)(0xC0 | code >> 6);
        out[1] = (char)(0x80 | (code & 0x3F));
        return 2;
    }
    if (code < 0x10000) {
        out[0] = (char)(0xE0 | code >> 12);
        out[1] = (char)(0x80 | (code >> 6 & 0x3F));
        out[2] = (char)(0x80 | (code & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | code >> 18);
    out[1] = (char)(0x80 | (code >> 12 & 0x3F));
    out[2] = (char)(0x80 | (code >> 6 & 0x3F));
    out[3] = (char)(0x80 | (code & 0x3F));
    return 4;
}

/* A JSON string at in->p (its opening quote) into a malloc'd UTF-8 copy; NULL after an error. */
static char *read_string(parser *in) {
    if (*in->p != '"') {
        fail(in, "%s", "expected a string");
        return NULL;
    }
    in->p++;
    /* The decoded text is never longer than the escaped one. */
    const char *end = in->p;
    while (*end && *end != '"') {
        end += end[0] == '\\' && end[1] ? 2 : 1;
    }
    char *out = (char *)malloc((size_t)(end - in->p) + 1);
    if (out == NULL) {
        fail(in, "%s", "out of memory");
        return NULL;
    }
    size_t n = 0;
    for (;;) {
        unsigned char c = (unsigned char)*in->p;
        if (c == 0) {
            free(out);
            fail(in, "%s", "a string is not closed");
            return NULL;
        }
        if (c == '"') {
            in->p++;
            break;
        }
        if (c < 0x20) {
            free(out);
            fail(in, "%s", "a string holds a raw control character (escape it)");
            return NULL;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            in->p++;
            continue;
        }
        char escape = in->p[1];
        in->p += 2;
        switch (escape) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned code, low;
            if (!read_hex4(in, &code)) {
                free(out);
                return NULL;
            }
            if (code >= 0xD800 && code <= 0xDBFF) {
                if (in->p[0] != '\\' || in->p[1] != 'u') {
                    free(out);
                    fail(in, "%s", "a \\u escape holds half of a surrogate pair");
                    return NULL;
                }
                in->p += 2;
                if (!read_hex4(in, &low) || low < 0xDC00 || low > 0xDFFF) {
                    free(out);
                    fail(in, "%s", "a \\u escape holds half of a surrogate pair");
                    return NULL;
                }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            } else if (code >= 0xDC00 && code <= 0xDFFF) {
                free(out);
                fail(in, "%s", "a \\u escape holds half of a surrogate pair");
                return NULL;
            }
            if (code == 0) {
                free(out);
                fail(in, "%s", "a string holds \\u0000");
                return NULL;
            }
            n += put_utf8(out + n, code);
            break;
        }
        default:
            free(out);
            fail(in, "%s", "a string holds an unknown escape");
            return NULL;
        }
    }
    out[n] = 0;
    return out;
}

/* A JSON number as its text (the Java side reads and range-checks it); NULL when it is not one. */
static char *read_number(parser *in) {
    const char *start = in->p;
    const char *p = start;
    if (*p == '-') {
        p++;
    }
    if (*p < '0' || *p > '9') {
        return NULL;
    }
    while (*p >= '0' && *p <= '9') {
        p++;
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9') {
            return NULL;
        }
        while (*p >= '0' && *p <= '9') {
            p++;
        }
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') {
            p++;
        }
        if (*p < '0' || *p > '9') {
            return NULL;
        }
        while (*p >= '0' && *p <= '9') {
            p++;
        }
    }
    size_t length = (size_t)(p - start);
    char *out = (char *)malloc(length + 1);
    if (out != NULL) {
        memcpy(out, start, length);
        out[length] = 0;
    }
    in->p = p;
    return out;
}

static int literal(parser *in, const char *word) {
    size_t length = strlen(word);
    if (strncmp(in->p, word, length) == 0) {
        in->p += length;
        return 1;
    }
    return 0;
}

void oam_settings_free(oam_settings *settings) {
    for (int i = 0; i < settings->count; i++) {
        free(settings->values[i]);
    }
    settings->count = 0;
}

int oam_settings_parse(const char *json, oam_settings *settings, char *error, size_t error_size) {
    memset(settings, 0, sizeof *settings);
    parser in = {json, error, error_size};
    skip_space(&in);
    if (*in.p != '{') {
        return fail(&in, "%s", "the settings must be one JSON object, such as {\"javaHome\": \"...\"}");
    }
    in.p++;
    skip_space(&in);
    int first = 1;
    while (*in.p != '}') {
        if (!first) {
            if (*in.p != ',') {
                oam_settings_free(settings);
                return fail(&in, "%s", "expected , or } after a member");
            }
            in.p++;
            skip_space(&in);
        }
        first = 0;
        if (*in.p != '"') {
            oam_settings_free(settings);
            return fail(&in, "%s", "expected a member name in quotes");
        }
        char *name = read_string(&in);
        if (name == NULL) {
            oam_settings_free(settings);
            return 0;
        }
        size_t index = 0;
        while (index < KNOWN_COUNT && strcmp(known[index].name, name) != 0) {
            index++;
        }
        if (index == KNOWN_COUNT) {
            char shown[96];
            snprintf(shown, sizeof shown, "%.64s%s", name, strlen(name) > 64 ? "..." : "");
            free(name);
            oam_settings_free(settings);
            return fail(&in, "unknown setting \"%s\" (known: classPath, javaHome, jvmOptions, logLevel, model, modelName, "
                             "apiKey, maxSessions, toolTimeoutSeconds, scriptedModels)", shown);
        }
        free(name);
        for (int i = 0; i < settings->count; i++) {
            if (settings->variables[i] == known[index].variable) {
                oam_settings_free(settings);
                return fail(&in, "the setting \"%s\" appears twice", known[index].name);
            }
        }
        skip_space(&in);
        if (*in.p != ':') {
            oam_settings_free(settings);
            return fail(&in, "expected : after \"%s\"", known[index].name);
        }
        in.p++;
        skip_space(&in);
        char *value = NULL;
        int is_null = 0;
        switch (known[index].kind) {
        case KIND_STRING:
            if (literal(&in, "null")) {
                is_null = 1;
            } else if (*in.p != '"') {
                oam_settings_free(settings);
                return fail(&in, "the setting \"%s\" must be a string", known[index].name);
            } else if ((value = read_string(&in)) == NULL) {
                oam_settings_free(settings);
                return 0; /* the error says why */
            }
            break;
        case KIND_NUMBER:
            if (literal(&in, "null")) {
                is_null = 1;
            } else if ((value = read_number(&in)) == NULL) {
                oam_settings_free(settings);
                return fail(&in, "the setting \"%s\" must be a number", known[index].name);
            }
            break;
        case KIND_BOOLEAN:
            if (literal(&in, "null")) {
                is_null = 1;
            } else if (literal(&in, "true")) {
                value = (char *)malloc(2);
                if (value) {
                    strcpy(value, "1");
                }
            } else if (literal(&in, "false")) {
                value = (char *)malloc(2);
                if (value) {
                    strcpy(value, "0");
                }
            } else {
                oam_settings_free(settings);
                return fail(&in, "the setting \"%s\" must be true or false", known[index].name);
            }
            break;
        }
        if (!is_null) {
            if (value == NULL) {
                oam_settings_free(settings);
                return fail(&in, "%s", "out of memory");
            }
            settings->variables[settings->count] = known[index].variable;
            settings->values[settings->count] = value;
            settings->count++;
        }
        skip_space(&in);
        if (*in.p == 0) {
            oam_settings_free(settings);
            return fail(&in, "%s", "the object is not closed");
        }
    }
    in.p++;
    skip_space(&in);
    if (*in.p != 0) {
        oam_settings_free(settings);
        return fail(&in, "%s", "text follows the settings object");
    }
    return 1;
}

const char *oam_setting(const oam_settings *settings, const char *variable) {
    if (settings != NULL) {
        for (int i = 0; i < settings->count; i++) {
            if (strcmp(settings->variables[i], variable) == 0) {
                return settings->values[i];
            }
        }
    }
    return getenv(variable);
}
