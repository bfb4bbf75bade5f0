package dev.fencing.demo;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How to run the demo: {@code --observe} (the agent in observe mode), {@code --prometheus} (also run Prometheus with
 * the project's alert rules), and where the built project is ({@code -Dfencing.demo.root}, default the current
 * directory: the agent jar, the sample apps' classes and class paths, the alert rules are found from there).
 */
record DemoOptions(boolean observe, boolean prometheus, Path root) {

  static final String USAGE = """
      usage: scripts/demo.sh [--observe] [--prometheus]
        --observe     run the agents in observe mode (fencing.mode=observe): nothing is blocked by the agent,
                      everything it would have blocked is counted; the fences still reject what reaches them
        --prometheus  also start Prometheus (/usr/bin/prometheus) with dashboards/prometheus/fencing-alerts.yaml
                      and show the stale-write alert firing""";

  static DemoOptions parse(String[] args) {
    boolean observe = false;
    boolean prometheus = false;
    for (String arg : args) {
      switch (arg) {
        case "--observe" -> observe = true;
        case "--prometheus" -> prometheus = true;
        default -> throw new IllegalArgumentException("unknown option '" + arg + "'\n" + USAGE);
      }
    }
    return new DemoOptions(observe, prometheus, Path.of(System.getProperty("fencing.demo.root", ".")));
  }

  Path agentJar() {
    return required(root.resolve("agent/jar/target/fencing-agent.jar"));
  }

  Path alertRules() {
    return required(root.resolve("dashboards/prometheus/fencing-alerts.yaml"));
  }

  /** The app's classes and its run-time class path, as its Maven build wrote them. */
  String appClasspath(String app) {
    Path dir = root.resolve("sample-apps").resolve(app).resolve("target");
    Path classes = required(dir.resolve("classes"));
    try {
      return classes + java.io.File.pathSeparator + Files.readString(required(dir.resolve("runtime-classpath.txt")))
          .strip();
    } catch (java.io.IOException e) {
      throw new StoryBroken("cannot read the class path of " + app + ": " + e.getMessage(), e);
    }
  }

  private static Path required(Path path) {
    if (!Files.exists(path)) {
      throw new StoryBroken(path.toAbsolutePath().normalize() + " is missing: build first with"
          + " `mvn -B install -DskipTests -pl sample-apps/demo -am` (scripts/demo.sh does), or set -Dfencing.demo.root"
          + " to the project directory");
    }
    return path;
  }
}
