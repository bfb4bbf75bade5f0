package dev.fencing.it.logging;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Logs through SLF4J (Logback or Log4j 2 behind it, whichever is on the class path) with an MDC entry of its own, on
 * stdin commands: "LOG text" outside any section, "SECTION text" inside {@link #job} (declared as a section by the
 * test), "USER name" changes the application's MDC entry, "MDC" prints the application's own MDC. Answers "OK ...". Outside dev.fencing.agent, whose classes the agent
 * never instruments.
 */
public final class LoggingApp {
  private static final Logger LOG = LoggerFactory.getLogger(LoggingApp.class);

  private LoggingApp() {}

  public static void main(String[] args) throws Exception {
    MDC.put("user", "alice");
    System.out.println("APP STARTED");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null;) {
      String[] p = line.split(" ", 2);
      switch (p[0]) {
        case "LOG" -> {
          LOG.info(p[1]);
          System.out.println("OK logged");
        }
        case "SECTION" -> {
          job(p[1]);
          System.out.println("OK logged");
        }
        case "USER" -> {
          MDC.put("user", p[1]);
          System.out.println("OK user");
        }
        case "MDC" -> {
          Map<String, String> mdc = MDC.getCopyOfContextMap();
          System.out.println("OK " + (mdc == null ? "{}" : new TreeMap<>(mdc)));
        }
        default -> System.out.println("OK unknown " + line);
      }
    }
  }

  /** Declared as a section by the test. */
  public static void job(String text) {
    LOG.info(text);
  }
}
