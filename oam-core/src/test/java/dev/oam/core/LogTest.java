package dev.oam.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Where log messages go: the JDK's System.Logger by default (here: java.util.logging, the JDK's default backend). */
class LogTest {
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Logger jul = Logger.getLogger(Log.LOGGER_NAME);
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };
    private java.util.logging.Level julLevel;
    private Log.Level level;

    @BeforeEach
    void capture() {
        level = Log.level();
        julLevel = jul.getLevel();
        jul.addHandler(capture);
        Log.toSystemLogger();
    }

    @AfterEach
    void restore() {
        jul.removeHandler(capture);
        jul.setLevel(julLevel);
        Log.setStream(System.err);
        Log.setLevel(level);
    }

    @Test
    void anInProcessHostGetsMessagesThroughSystemLoggerAtTheMatchingLevel() {
        jul.setLevel(java.util.logging.Level.ALL);
        Log.setLevel(Log.Level.DEBUG);
        IllegalStateException cause = new IllegalStateException("boom");
        Log.warning("the model is slow");
        Log.error("a tool failed", cause);
        Log.debug("details");
        assertThat(records)
                .extracting(LogRecord::getMessage)
                .containsExactly("the model is slow", "a tool failed", "details");
        assertThat(records)
                .extracting(LogRecord::getLevel)
                .containsExactly(
                        java.util.logging.Level.WARNING, java.util.logging.Level.SEVERE, java.util.logging.Level.FINE);
        assertThat(records.get(1).getThrown()).isSameAs(cause);
        assertThat(records).extracting(LogRecord::getLoggerName).containsOnly(Log.LOGGER_NAME);
    }

    @Test
    void theHostsLoggerConfigurationAndTheThresholdBothFilter() {
        jul.setLevel(java.util.logging.Level.INFO);
        Log.setLevel(Log.Level.DEBUG);
        assertThat(Log.enabled(Log.Level.DEBUG)).isFalse(); // the host's logger drops it: the guard says so
        Log.debug("dropped by the host's level");
        Log.setLevel(Log.Level.ERROR);
        Log.warning("dropped by the threshold");
        Log.error("kept", null);
        assertThat(records).extracting(LogRecord::getMessage).containsExactly("kept");
    }

    @Test
    void theConsoleWritesOneLineAMessageAtWarningUntilALevelIsSet() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Log.setStream(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        Log.setLevel(Log.Level.WARNING);
        Log.info("not shown");
        Log.warning("shown");
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertThat(text).matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} oam warning: shown\\R");
        assertThat(records).as("nothing reached the system logger").isEmpty();
        Log.setLevel(Log.Level.OFF);
        Log.error("silenced", null);
        assertThat(bytes.toString(StandardCharsets.UTF_8)).isEqualTo(text);
    }
}
