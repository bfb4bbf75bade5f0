package dev.fencing.agent.it;

import dev.fencing.testing.AgentJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * Drives a forked test app over stdin: writes one command, returns the app's answer to it. Answers are the output
 * lines starting with one of the app's answer prefixes, taken in order (the n-th answer belongs to the n-th command).
 */
public final class AppStdin {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  private final AgentJvm jvm;
  private final String[] prefixes;
  private final boolean stripPrefix;
  private int answers;

  private AppStdin(AgentJvm jvm, boolean stripPrefix, String... prefixes) {
    this.jvm = jvm;
    this.prefixes = prefixes;
    this.stripPrefix = stripPrefix;
  }

  /** The HTTP apps: "STATUS ..." or "ERR ...". */
  public static AppStdin http(AgentJvm jvm) {
    return new AppStdin(jvm, false, "STATUS ", "ERR ");
  }

  /** The JDBC app: "OK ...", "ERR ..." or "ROW ...". */
  public static AppStdin jdbc(AgentJvm jvm) {
    return new AppStdin(jvm, false, "OK ", "ERR ", "ROW ");
  }

  /** Apps whose answers are the lines starting with one of {@code prefixes}, returned whole. */
  public static AppStdin answers(AgentJvm jvm, String... prefixes) {
    return new AppStdin(jvm, false, prefixes);
  }

  /** Apps that mark answers with {@code marker}, returned without it. */
  public static AppStdin marked(AgentJvm jvm, String marker) {
    return new AppStdin(jvm, true, marker);
  }

  public String run(String command) throws IOException {
    jvm.process().getOutputStream().write((command + "\n").getBytes(StandardCharsets.UTF_8));
    jvm.process().getOutputStream().flush();
    answers++;
    long end = System.nanoTime() + TIMEOUT.toNanos();
    while (System.nanoTime() < end) {
      List<String> lines = jvm.output().lines().filter(this::isAnswer).toList();
      if (lines.size() >= answers) {
        String line = lines.get(answers - 1);
        return stripPrefix ? line.substring(prefixes[0].length()) : line;
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted waiting for the answer to " + command, e);
      }
    }
    throw new AssertionError("no answer to " + command + ":\n" + jvm.output());
  }

  private boolean isAnswer(String line) {
    for (String p : prefixes) {
      if (line.startsWith(p)) {
        return true;
      }
    }
    return false;
  }
}
