package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A forked JVM with the real, shaded agent jar attached, as an application would run it. The agent's behaviour in
 * premain, under class loading and on process death can only be seen from outside the JVM it lives in, and each
 * test needs a fresh agent. Output goes to a log file kept after {@link #close()} so a failed run can be read.
 */
public final class AgentJvm implements AutoCloseable {

  private static final String JAVA25_PROPERTY = "fencing.it.java25";
  private static final String RUN_JVM_ARGS_PROPERTY = "fencing.it.jvm-args";
  private static final int MAX_OUTPUT_IN_MESSAGES = 64 * 1024;

  private final String name;
  private final Process process;
  private final Path logFile;

  private AgentJvm(String name, Process process, Path logFile) {
    this.name = name;
    this.process = process;
    this.logFile = logFile;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The run's JDK axis: {@code all} (this build's JDK and the JDK 25) or {@code current} (this build's only). */
  private static final String JDKS_PROPERTY = "fencing.it.jdks";

  /**
   * The JDKs the integration tests of this run pass on: this build's (17) and a Java 25 home from
   * {@code -Dfencing.it.java25}, or this build's alone when the run says {@code -Dfencing.it.jdks=current} (the quick
   * tier). A missing JDK 25 fails loudly instead of skipping, so a green full run always means both were tested.
   */
  public static List<Path> javaHomes() {
    Path current = Path.of(System.getProperty("java.home"));
    String jdks = System.getProperty(JDKS_PROPERTY, "all").trim();
    if (jdks.equals("current")) {
      return List.of(current);
    }
    if (!jdks.equals("all")) {
      throw new IllegalStateException("-D" + JDKS_PROPERTY + "=" + jdks + " is not a JDK axis: expected 'all' (this"
          + " build's JDK and the JDK 25) or 'current' (this build's only)");
    }
    String home = System.getProperty(JAVA25_PROPERTY);
    if (home == null || home.isBlank()) {
      throw new IllegalStateException("no JDK 25 for the integration tests: -D" + JAVA25_PROPERTY + " is unset (the"
          + " build sets it from FENCING_IT_JAVA25 or the root pom.xml; run the tests through Maven or set it)");
    }
    Path java25 = Path.of(home);
    if (!Files.isExecutable(java25.resolve("bin/java"))) {
      throw new IllegalStateException("the JDK 25 the integration tests must run on is missing: " + java25
          + " has no bin/java; install a JDK 25 there or set FENCING_IT_JAVA25 to a JDK 25 home");
    }
    return List.of(current, java25).stream().distinct().toList();
  }

  public long pid() {
    return process.pid();
  }

  public Process process() {
    return process;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public Path logFile() {
    return logFile;
  }

  /** Everything the JVM printed so far, stdout and stderr interleaved. */
  public String output() {
    return Processes.read(logFile);
  }

  /** Waits for {@code substring} in the output and returns the output; fails at once if the JVM exits without it. */
  public String awaitOutput(String substring, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      boolean exited = !process.isAlive();
      String output = output();
      if (output.contains(substring)) {
        return output;
      }
      if (exited) {
        throw failure("exited with code " + process.exitValue() + " without printing \"" + substring + "\"");
      }
      if (System.nanoTime() > deadline) {
        throw failure("did not print \"" + substring + "\" within " + timeout);
      }
      Processes.sleep(50);
    }
  }

  /** Waits for the JVM to exit and returns its exit code. */
  public int awaitExit(Duration timeout) {
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw failure("still running after " + timeout);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for " + this, e);
    }
    return process.exitValue();
  }

  /**
   * Freezes the whole JVM (SIGSTOP), as a long GC pause or a paused VM would: its lease runs out while it cannot
   * notice, which is the case fencing tokens exist for.
   */
  public void suspend() {
    Processes.signal(pid(), "STOP");
  }

  /** Thaws a {@link #suspend() suspended} JVM (SIGCONT). */
  public void resume() {
    Processes.signal(pid(), "CONT");
  }

  /** Ends the JVM: SIGCONT first (a stopped JVM cannot run its shutdown hooks), SIGTERM, SIGKILL after 5 s. */
  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    try {
      Processes.signal(pid(), "CONT");
    } catch (IllegalStateException exitedMeanwhile) {
      // Nothing left to resume.
    }
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }

  @Override
  public String toString() {
    return "JVM " + name + " (pid " + process.pid() + ", log " + logFile + ")";
  }

  private AssertionError failure(String what) {
    String output = output();
    if (output.length() > MAX_OUTPUT_IN_MESSAGES) {
      output = "(earlier output cut)\n" + output.substring(output.length() - MAX_OUTPUT_IN_MESSAGES);
    }
    return new AssertionError(this + " " + what + "\n--- output ---\n" + output);
  }

  /** How to launch the JVM; every setting has a default except {@link #mainClass(String)}. */
  public static final class Builder {
    private Path javaHome = Path.of(System.getProperty("java.home"));
    private Path agentJar;
    private boolean agent = true;
    private String agentArgs;
    private final Map<String, String> sysProps = new LinkedHashMap<>();
    private final Map<String, String> env = new LinkedHashMap<>();
    private final List<String> jvmArgs = new ArrayList<>();
    private String classpath = System.getProperty("java.class.path");
    private String mainClass;
    private Path executableJar;
    private List<String> args = List.of();
    private String name;

    private Builder() {
    }

    public Builder javaHome(Path javaHome) {
      this.javaHome = javaHome;
      return this;
    }

    /** Defaults to the system property {@code fencing.agent.jar}, which the build sets to the shaded jar. */
    public Builder agentJar(Path agentJar) {
      this.agentJar = agentJar;
      return this;
    }

    /** The agent's option string, passed as {@code -javaagent:<jar>=<args>}. */
    public Builder agentArgs(String agentArgs) {
      this.agentArgs = agentArgs;
      return this;
    }

    /** Runs without the agent, for baselines and for the processes a test uses as witnesses. */
    public Builder noAgent() {
      this.agent = false;
      return this;
    }

    public Builder sysProp(String key, String value) {
      sysProps.put(key, value);
      return this;
    }

    /** Adds to (or overrides in) the environment inherited from the test JVM. */
    public Builder env(String key, String value) {
      env.put(key, value);
      return this;
    }

    /** Any JVM option, placed before the agent and the main class. */
    public Builder jvmArg(String jvmArg) {
      jvmArgs.add(jvmArg);
      return this;
    }

    /** Defaults to the test's own classpath, so main classes defined next to the tests can be launched. */
    public Builder classpath(String classpath) {
      this.classpath = classpath;
      return this;
    }

    /** Runs {@code java -jar <jar>} instead of a main class (e.g. the agent jar's CLI). */
    public Builder executableJar(Path jar) {
      this.executableJar = jar;
      return this;
    }

    public Builder mainClass(String mainClass) {
      this.mainClass = mainClass;
      return this;
    }

    /** The program arguments (replacing any given before). */
    public Builder args(String... args) {
      this.args = List.of(args);
      return this;
    }

    /** Names the log file; defaults to the main class's simple name. */
    public Builder name(String name) {
      this.name = name;
      return this;
    }

    /**
     * Launches the JVM. The command line is written next to the log (not into it, where it would match
     * {@link AgentJvm#awaitOutput}), to be rerun by hand when a test fails.
     */
    public AgentJvm start() {
      if (mainClass == null && executableJar == null) {
        throw new IllegalStateException("no main class: call mainClass(...) or executableJar(...)");
      }
      Path java = javaHome.resolve("bin/java");
      if (!Files.isExecutable(java)) {
        throw new IllegalStateException("no java executable at " + java);
      }
      List<String> command = new ArrayList<>();
      command.add(java.toString());
      command.addAll(runJvmArgs());
      command.addAll(jvmArgs);
      sysProps.forEach((key, value) -> command.add("-D" + key + "=" + value));
      if (agent) {
        command.add("-javaagent:" + resolveAgentJar() + (agentArgs == null ? "" : "=" + agentArgs));
      }
      if (executableJar != null) {
        command.add("-jar");
        command.add(executableJar.toString());
      } else {
        command.add("-cp");
        command.add(classpath);
        command.add(mainClass);
      }
      command.addAll(args);

      String logName = name != null ? name
          : executableJar != null ? executableJar.getFileName().toString()
          : mainClass.substring(mainClass.lastIndexOf('.') + 1);
      try {
        Path dir = Files.createTempDirectory("fencing-jvm-");
        Path log = dir.resolve(logName + ".log");
        Files.write(dir.resolve(logName + ".cmd"), command);
        ProcessBuilder builder = new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
        builder.environment().putAll(env);
        return new AgentJvm(logName, Processes.reapOnExit(builder.start()), log);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot start " + command, e);
      }
    }

    /**
     * The run's options for every forked JVM, before the builder's own: {@code -D}{@value #RUN_JVM_ARGS_PROPERTY}, split
     * at spaces (the agent-jar integration tests set {@code -XX:TieredStopAtLevel=1}: their JVMs live for seconds, in
     * which C2's compilations only compete with the JVMs' start for the machine's cores). Unset: none.
     */
    private static List<String> runJvmArgs() {
      String args = System.getProperty(RUN_JVM_ARGS_PROPERTY, "").trim();
      return args.isEmpty() ? List.of() : List.of(args.split("\\s+"));
    }

    private Path resolveAgentJar() {
      Path jar = agentJar;
      if (jar == null) {
        String property = System.getProperty("fencing.agent.jar");
        if (property == null || property.isBlank()) {
          throw new IllegalStateException("no agent jar: the system property fencing.agent.jar is not set "
              + "(the build passes the shaded agent jar's path); call agentJar(...) or noAgent()");
        }
        jar = Path.of(property);
      }
      if (!Files.isRegularFile(jar)) {
        throw new IllegalStateException("the agent jar " + jar.toAbsolutePath()
            + " does not exist: build the agent before running the integration tests");
      }
      return jar.toAbsolutePath();
    }
  }
}
