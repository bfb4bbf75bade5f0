package dev.fencing.outbox;

import java.io.PrintStream;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** The relay's log lines on standard error: {@code <time> fencing-outbox <LEVEL> <message>}. */
final class RelayLog {
  private final PrintStream out;

  RelayLog(PrintStream out) {
    this.out = out;
  }

  void info(String message) {
    line("INFO", message);
  }

  void warn(String message) {
    line("WARN", message);
  }

  private void line(String level, String message) {
    out.println(Instant.now().truncatedTo(ChronoUnit.MILLIS) + " fencing-outbox " + level + " " + message);
  }
}
