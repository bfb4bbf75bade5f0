package dev.fencing.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * How to run the demo: {@code --observe} (the agent in observe mode), {@code --prometheus} (also run Prometheus with
 * the project's alert rules), {@code --sections} (the other story: declared sections on two Spring Boot replicas),
 * and where the built project is ({@code -Dfencing.demo.root}, default the current directory: the agent jar, the
 * sample apps' classes, class paths and fat jar, the alert rules are found from there).
 */
record DemoOptions(boolean observe, boolean prometheus, boolean sections, Path root) {

  static final String USAGE = """
      usage: scripts/demo.sh [--observe] [--prometheus]
             scripts/demo.sh --sections
        (none)        the split-brain story: two ledger workers under one JVM-wide lock, the holder frozen past its
                      lease, every stale side effect stopped by its agent or by a fence
        --observe     run the agents in observe mode (fencing.mode=observe): nothing is blocked by the agent,
                      everything it would have blocked is counted; the fences still reject what reaches them
        --prometheus  also start Prometheus (/usr/bin/prometheus) with dashboards/prometheus/fencing-alerts.yaml
                      and show the stale-write alert firing
        --sections    the declared-sections story instead: two replicas of an unmodified Spring Boot service both
                      serve HTTP writes, its @Scheduled settlement job (fencing.sections=...#settle@settlement) runs
                      on the lock holder only; the holder is frozen mid-run, the other replica takes the job over
                      with a higher token, and the frozen run's write is refused when it wakes""";

  static DemoOptions parse(String[] args) {
    boolean observe = false;
    boolean prometheus = false;
    boolean sections = false;
    for (String arg : args) {
      switch (arg) {
        case "--observe" -> observe = true;
        case "--prometheus" -> prometheus = true;
        case "--sections" -> sections = true;
        default -> throw new IllegalArgumentException("unknown option '" + arg + "'\n" + USAGE);
      }
    }
    if (sections && (observe || prometheus)) {
      throw new IllegalArgumentException("--sections tells its own story and takes no other option (got "
          + String.join(" ", args) + ")\n" + USAGE);
    }
    return new DemoOptions(observe, prometheus, sections, Path.of(System.getProperty("fencing.demo.root", ".")));
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
    } catch (IOException e) {
      throw new StoryBroken("cannot read the class path of " + app + ": " + e.getMessage(), e);
    }
  }

  /**
   * The Spring Boot sample's fat jar: {@code -Dfencing.demo.spring.jar} (set by the demo's build for DemoIT), else
   * the one its build left in sample-apps/spring-replicas/target.
   */
  Path springJar() {
    String property = System.getProperty("fencing.demo.spring.jar");
    if (property != null) {
      return required(Path.of(property));
    }
    Path dir = root.resolve("sample-apps/spring-replicas/target");
    try (Stream<Path> files = Files.isDirectory(dir) ? Files.list(dir) : Stream.empty()) {
      // The repackaged jar; the build also leaves the plain one as *.jar.original.
      return files.filter(p -> p.getFileName().toString().matches("fencing-sample-spring-replicas-.*\\.jar")
              && !p.getFileName().toString().matches(".*-(sources|javadoc|tests)\\.jar"))
          .max(Comparator.comparing(DemoOptions::modified))
          .orElseGet(() -> required(dir.resolve("fencing-sample-spring-replicas-<version>.jar")));
    } catch (IOException e) {
      throw new StoryBroken("cannot list " + dir + ": " + e.getMessage(), e);
    }
  }

  private static FileTime modified(Path path) {
    try {
      return Files.getLastModifiedTime(path);
    } catch (IOException e) {
      return FileTime.fromMillis(0);
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
