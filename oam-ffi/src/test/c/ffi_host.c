/*
 * oam-ffi-host: a minimal host of the C ABI for the protocol contract suite. Every line read from
 * stdin is handed to oam_bridge_send(); every message of the callback is written to stdout as
 * one line. At end of input the bridge is destroyed and the program exits 0 (the Java side closes
 * stdin once it has seen every answer it waits for). Exit status 3: the bridge could not be
 * created (the reason is on stderr).
 */
#include "open_apple_models.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_message(const char *message, void *user_data) {
    (void)user_data;
    /* The callback is never re-entered, so stdout needs no lock of its own. */
    fputs(message, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

int main(void) {
    oam_bridge *bridge = oam_bridge_create(on_message, NULL);
    if (bridge == NULL) {
        fprintf(stderr, "oam-ffi-host: oam_bridge_create returned NULL\n");
        return 3;
    }
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    while ((length = getline(&line, &capacity, stdin)) >= 0) {
        if (length > 0 && line[length - 1] == '\n') {
            line[--length] = 0;
        }
        int rc = oam_bridge_send(bridge, line);
        if (rc != OAM_OK) {
            fprintf(stderr, "oam-ffi-host: oam_bridge_send returned %d\n", rc);
        }
    }
    free(line);
    oam_bridge_destroy(bridge);
    return 0;
}
