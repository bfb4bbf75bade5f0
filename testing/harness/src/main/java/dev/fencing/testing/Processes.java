package dev.fencing.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Operating-system helpers shared by the harness classes; no shell is ever involved. */
final class Processes {

  /** Outcome of a short helper command; exit code -1 means it was killed after its timeout. */
  record Result(int exitCode, String stdout, String stderr) {
    boolean ok() {
      return exitCode == 0;
    }
  }

  private static final Set<Process> CHILDREN = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(
        () -> CHILDREN.forEach(Process::destroyForcibly), "fencing-harness-reaper"));
  }

  private Processes() {
  }

  /**
   * Registers a long-lived child so that an aborted test run does not leave etcd servers or agent JVMs behind,
   * holding ports and (worse) an etcd lock that the next run would wait for.
   */
  static Process reapOnExit(Process process) {
    CHILDREN.add(process);
    process.onExit().thenRun(() -> CHILDREN.remove(process));
    return process;
  }

  /**
   * Runs a short command to completion. Output goes to temporary files rather than pipes so that neither stream can
   * fill up and block the child while the other is being read.
   */
  static Result run(Duration timeout, Map<String, String> env, List<String> command) {
    Path out = null;
    Path err = null;
    try {
      out = Files.createTempFile("fencing-cmd-", ".out");
      err = Files.createTempFile("fencing-cmd-", ".err");
      ProcessBuilder builder = new ProcessBuilder(command)
          .redirectOutput(out.toFile())
          .redirectError(err.toFile());
      builder.environment().putAll(env);
      Process process = builder.start();
      process.getOutputStream().close();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly().waitFor();
        return new Result(-1, read(out), read(err) + "\n(killed after " + timeout + ")");
      }
      return new Result(process.exitValue(), read(out), read(err));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + command, e);
    } finally {
      deleteTree(out);
      deleteTree(err);
    }
  }

  /** Sends a signal by name (STOP, CONT, ...): the JDK can only send TERM and KILL. */
  static void signal(long pid, String signal) {
    Result result = run(Duration.ofSeconds(5), Map.of(), List.of("kill", "-" + signal, Long.toString(pid)));
    if (!result.ok()) {
      throw new IllegalStateException("kill -" + signal + " " + pid + " failed: " + result.stderr());
    }
  }

  /**
   * Finds an executable on PATH or in /usr/bin, failing with {@code installHint} (what to install) rather than the
   * IOException a missing program would cause later.
   */
  static Path executable(String name, String installHint) {
    String path = System.getenv().getOrDefault("PATH", "");
    return Stream.concat(Stream.of(path.split(File.pathSeparator)), Stream.of("/usr/bin"))
        .filter(dir -> !dir.isEmpty())
        .map(dir -> Path.of(dir, name))
        .filter(Files::isExecutable)
        .findFirst()
        .orElseThrow(() -> new IllegalStateException(name + installHint));
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** Reads a file that another process may be writing; a half-written character must not make the read fail. */
  static String read(Path file) {
    try {
      return Files.exists(file) ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The last {@code lines} lines of a log, headed by its path, for failure messages. */
  static String tail(Path file, int lines) {
    String[] all = read(file).split("\n", -1);
    int from = Math.max(0, all.length - lines);
    return "--- " + file + " (last " + (all.length - from) + " lines) ---\n"
        + String.join("\n", Arrays.copyOfRange(all, from, all.length));
  }

  /**
   * A new temporary directory that lives until this JVM exits (then deleted with its contents): for what a test JVM
   * makes once and copies per server, such as a database's freshly initialized data directory.
   */
  static Path tempDirUntilExit(String prefix) {
    Path dir;
    try {
      dir = Files.createTempDirectory(prefix);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(dir), prefix + "cleanup"));
    return dir;
  }

  static void deleteTree(Path root) {
    if (root == null || !Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + root, e);
    }
  }
}
