package dev.fencing.agent.it.logging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.it.logging.LoggingApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Log correlation with the real Logback and Log4j 2 (behind SLF4J), the oldest and the latest of each, on Java 17
 * and 25, against a real etcd: the lines the application's own pattern layout writes carry {@code %X{fencing.lock}},
 * {@code %X{fencing.token}} and {@code %X{fencing.grant}} as /status shows them: a section's inside it, the whole-JVM
 * lock's outside every section while the JVM holds it, nothing outside every section without one, nothing with the
 * switch off; the application's own MDC keeps its entries and never gets the keys.
 */
class LogCorrelationIT {
  private static final String JOB = LoggingApp.class.getName() + "#job";
  private static final String PATTERN = "LINE lock=[%X{fencing.lock}] token=[%X{fencing.token}] grant=[%X{fencing.grant}]"
      + " user=[%X{user}] %msg%n";

  @TempDir
  Path dir;

  /** Logback and Log4j 2 at each version of testing/library-versions: {@code logback-<v>}, {@code log4j-<v>}. */
  static List<String> libraries() {
    List<String> libraries = new ArrayList<>();
    for (String library : List.of("logback", "log4j")) {
      AgentProcesses.libraryVersions(library).forEach(v -> libraries.add(library + "-" + v));
    }
    return libraries;
  }

  /**
   * Each version of each library once, each library on every Java: the oldest of each on this build's Java, the
   * latest on the newest. That the hooks are woven into a library differs between Javas, which each library shows on
   * both; which keys a line gets is the agent's and the library's logic, the same on every Java.
   */
  static Stream<Arguments> everyJavaAndLibrary() {
    List<Path> homes = AgentProcesses.javaHomes();
    Path newest = AgentProcesses.newestJava().get(0);
    List<Arguments> cases = new ArrayList<>();
    for (String library : List.of("logback", "log4j")) {
      List<String> versions = AgentProcesses.libraryVersions(library);
      for (int i = 0; i < versions.size(); i++) {
        cases.add(Arguments.of(i == versions.size() - 1 ? newest : homes.get(0), library + "-" + versions.get(i)));
      }
    }
    return cases.stream();
  }

  /** The switch (the agent's own setting, the same on every Java): Logback on this build's Java, Log4j 2 on 25. */
  static Stream<Arguments> everyJavaAndLatestLibraries() {
    List<String> libs = libraries();
    return Stream.of(Arguments.of(AgentProcesses.javaHomes().get(0), libs.get(1)), // logback latest
        Arguments.of(AgentProcesses.newestJava().get(0), libs.get(3))); // log4j latest
  }

  /** One JVM of the application with its logging library, its log configuration and its agent's status port. */
  final class App implements AutoCloseable {
    final AgentJvm jvm;
    final int port;
    private final AppStdin stdin;

    /** {@code sysProps}: more system properties of the application, as key, value pairs. */
    App(Path javaHome, String library, String agentArgs, String... sysProps) throws IOException {
      port = Ports.freePort();
      Path libs = AgentProcesses.libraryJars(library.substring(0, library.indexOf('-')),
          library.substring(library.indexOf('-') + 1));
      StringBuilder cp = new StringBuilder(AgentProcesses.appClasspath());
      try (Stream<Path> jars = Files.list(libs)) {
        jars.sorted().forEach(j -> cp.append(File.pathSeparator).append(j));
      }
      AgentJvm.Builder b = AgentJvm.builder().javaHome(javaHome)
          .name("logging-" + library + "-java" + AgentProcesses.javaVersion(javaHome)).classpath(cp.toString())
          .mainClass(LoggingApp.class.getName()).agentArgs(agentArgs + ",http.port=" + port);
      if (library.startsWith("logback")) {
        Path config = dir.resolve("logback.xml");
        Files.writeString(config, "<configuration><appender name=\"OUT\" class=\"ch.qos.logback.core.ConsoleAppender\">"
            + "<encoder><pattern>" + PATTERN + "</pattern></encoder></appender>"
            + "<root level=\"INFO\"><appender-ref ref=\"OUT\"/></root></configuration>");
        b.sysProp("logback.configurationFile", config.toString());
      } else {
        Path config = dir.resolve("log4j2.xml");
        Files.writeString(config, "<Configuration status=\"WARN\"><Appenders><Console name=\"OUT\" target=\"SYSTEM_OUT\">"
            + "<PatternLayout pattern=\"" + PATTERN.replace("%msg", "%m") + "\"/></Console></Appenders>"
            + "<Loggers><Root level=\"info\"><AppenderRef ref=\"OUT\"/></Root></Loggers></Configuration>");
        b.sysProp("log4j2.configurationFile", config.toString());
      }
      for (int i = 0; i < sysProps.length; i += 2) {
        b.sysProp(sysProps[i], sysProps[i + 1]);
      }
      jvm = b.start();
      stdin = AppStdin.answers(jvm, "OK ");
      jvm.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    }

    /** Logs {@code text} ("LOG" outside any section, "SECTION" inside it); returns what the layout wrote before it. */
    String log(String command, String text) throws IOException {
      assertThat(stdin.run(command + " " + text)).isEqualTo("OK logged");
      Matcher m = Pattern.compile("(?m)^LINE (.*) " + Pattern.quote(text) + "$").matcher(jvm.output());
      assertThat(m.find()).as(jvm.output()).isTrue();
      return m.group(1);
    }

    String stdinRun(String command) throws IOException {
      return stdin.run(command);
    }

    String mdc() throws IOException {
      return stdin.run("MDC");
    }

    /** Waits until /status shows the section lock {@code lock} held; returns "lock=[..] token=[..] grant=[..]". */
    String sectionLock(String lock) {
      String body = Http.awaitStatus(port, "\"lock\":\"" + lock + "\",\"scope\":\"sections\",\"state\":\"HOLDING\"",
          Duration.ofSeconds(20));
      Matcher m = Pattern.compile("\"lock\":\"" + Pattern.quote(lock) + "\",\"scope\":\"sections\",\"state\":\"HOLDING\","
          + "\"token\":(\\d+),\"highestSeenToken\":\\d+,\"leaseId\":\"([0-9a-f]+)\"").matcher(body);
      assertThat(m.find()).as(body).isTrue();
      return "lock=[" + lock + "] token=[" + m.group(1) + "] grant=[" + m.group(2) + "]";
    }

    /** Waits until /status shows the whole-JVM lock {@code lock} held; returns "lock=[..] token=[..] grant=[..]". */
    String jvmLock(String lock) {
      String body = Http.awaitStatus(port, "{\"lock\":\"" + lock + "\",\"state\":\"HOLDING\"", Duration.ofSeconds(20));
      Matcher m = Pattern.compile("^\\{\"lock\":\"" + Pattern.quote(lock) + "\",\"state\":\"HOLDING\",\"token\":(\\d+),"
          + ".*?\"leaseId\":\"([0-9a-f]+)\"").matcher(body);
      assertThat(m.find()).as(body).isTrue();
      return "lock=[" + lock + "] token=[" + m.group(1) + "] grant=[" + m.group(2) + "]";
    }

    @Override
    public void close() {
      jvm.close();
    }
  }

  private static final String NOTHING = "lock=[] token=[] grant=[] user=[alice]";

  @ParameterizedTest(name = "{1} on {0}")
  @MethodSource("everyJavaAndLibrary")
  void linesLoggedWhileATokenIsCurrentCarryItsLockTokenAndGrant(Path javaHome, String library) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single()) {
      String endpoints = ",etcd.endpoints=" + etcd.endpoints();
      // Sections only: a line outside the section carries nothing, one inside it the section's lock.
      try (App app = new App(javaHome, library, "sections=" + JOB + "@job-a" + endpoints)) {
        String job = app.sectionLock("job-a");
        assertThat(app.log("LOG", "outside-before")).isEqualTo(NOTHING);
        assertThat(app.log("SECTION", "inside")).isEqualTo(job + " user=[alice]");
        assertThat(app.log("LOG", "outside-after")).isEqualTo(NOTHING);
        assertThat(app.mdc()).isEqualTo("OK {user=alice}");
        // The application's MDC changes under the same token: the next line has its new value beside the keys.
        assertThat(app.stdinRun("USER bob")).isEqualTo("OK user");
        assertThat(app.log("SECTION", "inside-bob")).isEqualTo(job + " user=[bob]");
        assertThat(app.mdc()).isEqualTo("OK {user=bob}");
      }
      // A whole-JVM lock: held, every line outside a section carries it; a section's line its own lock.
      try (App app = new App(javaHome, library, "lock=app-b,sections=" + JOB + "@job-b" + endpoints)) {
        String jvmWide = app.jvmLock("app-b");
        String job = app.sectionLock("job-b");
        assertThat(app.log("LOG", "outside-before")).isEqualTo(jvmWide + " user=[alice]");
        assertThat(app.log("SECTION", "inside")).isEqualTo(job + " user=[alice]");
        assertThat(app.log("LOG", "outside-after")).isEqualTo(jvmWide + " user=[alice]");
        assertThat(app.mdc()).isEqualTo("OK {user=alice}");
      }
    }
  }

  /**
   * Log4j 2's garbage-free logging (thread-local reusable events, the garbage-free ThreadContext map): the keys go into
   * the event's own reusable map, and the next event on that thread, made outside the section, has none left.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("currentJava")
  void garbageFreeLog4jEventsGetTheKeysAndKeepNoneForTheNext(Path javaHome) throws Exception {
    String log4j = libraries().get(3);
    try (EtcdCluster etcd = EtcdCluster.single();
        App app = new App(javaHome, log4j, "sections=" + JOB + "@job-d,etcd.endpoints=" + etcd.endpoints(),
            "log4j2.enableThreadlocals", "true", "log4j2.garbagefreeThreadContextMap", "true")) {
      String job = app.sectionLock("job-d");
      assertThat(app.log("LOG", "outside-before")).isEqualTo(NOTHING);
      assertThat(app.log("SECTION", "inside")).isEqualTo(job + " user=[alice]");
      assertThat(app.log("LOG", "outside-after")).isEqualTo(NOTHING);
      assertThat(app.mdc()).isEqualTo("OK {user=alice}");
    }
  }

  /** Log4j 2's garbage-free mode is the library's and the agent's logic, the same on every Java: this build's. */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  @ParameterizedTest(name = "{1} on {0}")
  @MethodSource("everyJavaAndLatestLibraries")
  void theSwitchTurnsItOff(Path javaHome, String library) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        App app = new App(javaHome, library, "lock=app-c,sections=" + JOB + "@job-c,etcd.endpoints=" + etcd.endpoints()
            + ",instrumentation.log-correlation.enabled=false")) {
      app.jvmLock("app-c");
      app.sectionLock("job-c");
      assertThat(app.log("LOG", "outside")).isEqualTo(NOTHING);
      assertThat(app.log("SECTION", "inside")).isEqualTo(NOTHING);
    }
  }
}
