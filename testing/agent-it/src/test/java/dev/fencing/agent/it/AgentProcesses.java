package dev.fencing.agent.it;

import dev.fencing.agent.it.apps.ProbeApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Starts the probe application with the real agent jar, and reads its status endpoint. */
public final class AgentProcesses {
  private static final Pattern DECISION = Pattern.compile("DECISION (\\d+) (\\w+) (\\w+|-) (\\d+)");

  private AgentProcesses() {}

  /**
   * The versions of {@code library} that testing/library-versions holds (its modules {@code <library>-<version>}),
   * oldest first.
   */
  public static List<String> libraryVersions(String library) {
    try (java.util.stream.Stream<Path> dirs = java.nio.file.Files.list(libraryVersionsDir())) {
      List<String> versions = dirs.map(d -> d.getFileName().toString())
          .filter(n -> n.startsWith(library + "-") && n.substring(library.length() + 1).matches("[0-9][0-9.]*"))
          .map(n -> n.substring(library.length() + 1))
          .sorted(AgentProcesses::compareVersions).toList();
      if (versions.isEmpty()) {
        throw new IllegalStateException("no " + library + "-<version> module in " + libraryVersionsDir());
      }
      return versions;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The jars testing/library-versions resolved for {@code library} {@code version}. */
  public static Path libraryJars(String library, String version) {
    return libraryVersionsDir().resolve(library + "-" + version).resolve("target").resolve("jars");
  }

  private static Path libraryVersionsDir() {
    String dir = System.getProperty("fencing.it.library.versions");
    if (dir == null) {
      throw new IllegalStateException("fencing.it.library.versions is not set: run through Maven (testing/agent-it)");
    }
    return Path.of(dir);
  }

  private static int compareVersions(String a, String b) {
    String[] x = a.split("\\.");
    String[] y = b.split("\\.");
    for (int i = 0; i < Math.max(x.length, y.length); i++) {
      int c = Integer.compare(i < x.length ? Integer.parseInt(x[i]) : 0, i < y.length ? Integer.parseInt(y[i]) : 0);
      if (c != 0) {
        return c;
      }
    }
    return 0;
  }

  /** Every JDK the integration tests cover (17 and 25); fails when one is missing. */
  public static List<Path> javaHomes() {
    return AgentJvm.javaHomes();
  }

  /** The newest of {@link #javaHomes()}: for cases whose subject is the agent's own logic, the same on every Java. */
  public static List<Path> newestJava() {
    List<Path> homes = javaHomes();
    return List.of(homes.get(homes.size() - 1));
  }

  /** An agent-attached probe app and the port of its status endpoint. */
  public static final class Agent implements AutoCloseable {
    public final AgentJvm jvm;
    public final int port;

    public Agent(AgentJvm jvm, int port) {
      this.jvm = jvm;
      this.port = port;
    }

    public String status() {
      return Http.get("http://127.0.0.1:" + port + "/status");
    }

    public String field(String name) {
      return Http.jsonField(status(), name);
    }

    public String state() {
      return field("state");
    }

    public long token() {
      return Long.parseLong(field("token"));
    }

    public String metrics() {
      return Http.get("http://127.0.0.1:" + port + "/metrics");
    }

    public String awaitState(String state, Duration timeout) {
      return Http.awaitStatus(port, "\"state\":\"" + state + "\"", timeout);
    }

    /** The last decision the probe printed: "KIND REASON TOKEN". */
    public String lastDecision() {
      Matcher m = DECISION.matcher(jvm.output());
      String last = null;
      while (m.find()) {
        last = m.group(2) + " " + m.group(3) + " " + m.group(4);
      }
      return last;
    }

    @Override
    public void close() {
      jvm.close();
    }
  }

  /** Starts the probe with {@code -javaagent:fencing-agent.jar=<args>,http.port=<free port>}. */
  public static Agent start(Path javaHome, String name, String agentArgs) {
    int port = Ports.freePort();
    AgentJvm jvm = AgentJvm.builder()
        .javaHome(javaHome)
        .name(name + "-java" + javaVersion(javaHome))
        .agentArgs(agentArgs + ",http.port=" + port + ",holder.id=" + name)
        .classpath(appClasspath())
        .mainClass(ProbeApp.class.getName())
        .start();
    jvm.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    Http.awaitStatus(port, "\"lock\"", Duration.ofSeconds(20)); // the endpoint starts on a daemon thread
    return new Agent(jvm, port);
  }

  /**
   * Every jar of the test's own class path, none of the agent's: the application libraries of the lock and leader
   * apps (jetcd, Curator, ZooKeeper, Spring Integration) and what they bring.
   */
  public static String testJars() {
    return java.util.Arrays.stream(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
        .filter(p -> p.endsWith(".jar") && !Path.of(p).getFileName().toString().startsWith("fencing-"))
        .collect(java.util.stream.Collectors.joining(java.io.File.pathSeparator));
  }

  /** Only the test apps' classes: the forked app must not see the agent's modules on its class path. */
  public static String appClasspath() {
    try {
      return Path.of(ProbeApp.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Jars of the test's own class path whose file names start with one of {@code prefixes} (e.g. "jetty-"), joined as a
   * class path for a forked app; fails naming the prefix that matched nothing.
   */
  public static String libraries(String... prefixes) {
    List<String> jars = new java.util.ArrayList<>();
    for (String prefix : prefixes) {
      List<String> found = java.util.Arrays.stream(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
          .filter(e -> e.endsWith(".jar") && Path.of(e).getFileName().toString().startsWith(prefix)).toList();
      if (found.isEmpty()) {
        throw new IllegalStateException("no jar starting with '" + prefix + "' on the test class path: add it as a test dependency of agent/jar");
      }
      jars.addAll(found);
    }
    return String.join(java.io.File.pathSeparator, jars);
  }

  public static String javaVersion(Path javaHome) {
    return javaHome.toString().contains("25") ? "25" : "17";
  }
}
