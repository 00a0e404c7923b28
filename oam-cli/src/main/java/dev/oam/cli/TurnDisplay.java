package dev.oam.cli;

import dev.oam.bridge.spi.Coding;
import dev.oam.core.agent.TurnEvent;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.json.Json;
import java.io.PrintStream;

/** Shows a turn as it runs: JSON lines with --events; streamed text and tool lines otherwise. */
final class TurnDisplay implements TurnListener {
    private final Tty.Spinner spinner;
    private final PrintStream out;
    private final PrintStream err;
    private final boolean events;
    private final boolean json;
    private final boolean verbose;
    private final boolean streamText;
    private final boolean color = Tty.colorOnStderr();
    private final boolean toolLines;
    private boolean streamed;
    private boolean midLine;

    /**
     * @param events print each event as a JSON line ({@code --events})
     * @param json print nothing while the turn runs ({@code --json})
     * @param verbose also show model steps and a usage line
     * @param streamText print the answer as it is written (not {@code --no-stream}, no {@code --schema})
     */
    TurnDisplay(
            Tty.Spinner spinner,
            PrintStream out,
            PrintStream err,
            boolean events,
            boolean json,
            boolean verbose,
            boolean streamText) {
        this.spinner = spinner;
        this.out = out;
        this.err = err;
        this.events = events;
        this.json = json;
        this.verbose = verbose;
        this.streamText = streamText;
        this.toolLines = verbose || Tty.isTerminal(2);
    }

    @Override
    public void onEvent(TurnEvent event) {
        if (!(event instanceof TurnEvent.ModelStep)) {
            spinner.stop();
        }
        if (events) {
            out.println(Json.write(Coding.event(event)));
            out.flush();
            return;
        }
        if (json) {
            return;
        }
        switch (event) {
            case TurnEvent.Text text
            when streamText -> {
                if (text.isReset()) {
                    if (midLine) {
                        out.println();
                    }
                    out.print(text.text());
                } else {
                    out.print(text.delta());
                }
                out.flush();
                streamed = true;
                midLine = !text.text().endsWith("\n") && !text.text().isEmpty();
            }
            case TurnEvent.ToolCallStarted started
            when toolLines ->
                err.println(Tty.dim(
                        "⚙ " + started.call().name() + " "
                                + Json.write(started.call().arguments())
                                + (started.execution().equals("client") ? " (external)" : ""),
                        color));
            case TurnEvent.ToolCallCompleted completed
            when toolLines -> {
                String text = clip(completed.record().reply().modelText(), 200);
                err.println(
                        completed.record().isError() ? Tty.red("  ↳ " + text, color) : Tty.dim("  ↳ " + text, color));
            }
            case TurnEvent.ModelStep step
            when verbose ->
                err.println(Tty.dim(
                        "step " + step.step().index() + ": tools "
                                + step.step().mode().wireName()
                                + (step.step().enabledTools().isEmpty()
                                        ? ""
                                        : " " + step.step().enabledTools()),
                        color));
            default -> {}
        }
    }

    void endLine() {
        if (midLine) {
            out.println();
            out.flush();
            midLine = false;
        }
    }

    void finish(TurnResult result, boolean structured) {
        if (structured && result.structured() != null) {
            out.println(Out.pretty(result.structured()));
        } else if (!streamed) {
            out.println(result.text());
        } else {
            endLine();
        }
        out.flush();
        if (verbose) {
            err.println(Tty.dim(
                    "usage: " + result.usage().inputTokens() + " input ("
                            + result.usage().cachedInputTokens()
                            + " cached), " + result.usage().outputTokens() + " output, "
                            + result.usage().totalTokens() + " total tokens; "
                            + result.steps().size() + " steps, "
                            + result.toolCalls().size() + " tool calls",
                    color));
        }
    }

    /** {@code text} on one line, cut to {@code max} characters with an ellipsis. */
    static String clip(String text, int max) {
        String line = text.replace('\n', ' ');
        return line.length() <= max ? line : line.substring(0, max - 1) + "…";
    }
}
