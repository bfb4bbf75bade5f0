package dev.fencing.demo;

import java.util.Locale;

/** The demo's output: sentences stamped with the seconds since the start, and plain lines. */
final class Console {
  private final long startMillis = System.currentTimeMillis();

  long startMillis() {
    return startMillis;
  }

  void say(String sentence) {
    System.out.printf(Locale.ROOT, "[%5.1fs] %s%n", seconds(System.currentTimeMillis()), sentence);
    System.out.flush();
  }

  void line(String text) {
    System.out.println(text);
    System.out.flush();
  }

  void heading(String title) {
    line("");
    line("== " + title + " ==");
  }

  /** Seconds since the start at the epoch instant {@code millis}. */
  double seconds(long millis) {
    return (millis - startMillis) / 1000.0;
  }

  String at(long millis) {
    return String.format(Locale.ROOT, "%5.1fs", seconds(millis));
  }
}
