package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real MariaDB server from the Debian packages, in its own temporary directory on a free loopback port, with a
 * database {@code fencing} and user root without password. InnoDB's row locks and MariaDB's trigger language are what
 * the fence relies on, so only the real server tests it. The log is flushed at most once a second (the tests measure
 * lock behaviour, not the disk).
 */
public final class MariaDbServer implements AutoCloseable {

  private static final String INSTALL_HINT = " is not installed: run `apt-get update && apt-get install -y "
      + "mariadb-server` (Debian) — the SQL fence tests need a real MariaDB";
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
  public static final String DATABASE = "fencing";

  private final Path root;
  private final Path dataDir;
  private final Path logFile;
  private final int port;
  private Process process;

  private MariaDbServer(Path root, int port) {
    this.root = root;
    this.dataDir = root.resolve("data");
    this.logFile = root.resolve("err.log");
    this.port = port;
  }

  /** Initialises a data dir, starts the server and creates database {@value #DATABASE}; running on return. */
  public static MariaDbServer start() {
    binary("mariadb-install-db");
    binary("mariadbd");
    binary("mariadb-admin");
    binary("mariadb");
    Path root;
    try {
      root = Files.createTempDirectory("fencing-mariadb-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    MariaDbServer server = new MariaDbServer(root, Ports.freePort());
    try {
      server.init();
      server.startServer();
      server.sql("CREATE DATABASE IF NOT EXISTS " + DATABASE);
      return server;
    } catch (RuntimeException | Error e) {
      server.close();
      throw e;
    }
  }

  /** JDBC URL of database {@value #DATABASE} as root. */
  public String jdbcUrl() {
    return "jdbc:mariadb://127.0.0.1:" + port + "/" + DATABASE + "?user=root";
  }

  public int port() {
    return port;
  }

  public Path logFile() {
    return logFile;
  }

  public String logTail(int lines) {
    return Processes.tail(logFile, lines);
  }

  /** Runs SQL with the mariadb client as root, failing with its error output. */
  public String sql(String statements) {
    Processes.Result result = Processes.run(COMMAND_TIMEOUT, Map.of(), List.of(binary("mariadb").toString(),
        "--no-defaults", "-h127.0.0.1", "-P" + port, "-uroot", "-N", "-B", "-e", statements));
    if (!result.ok()) {
      throw new IllegalStateException("mariadb -e '" + statements + "' failed: " + result.stderr());
    }
    return result.stdout();
  }

  /** Clean shutdown; the data dir stays until {@link #close()}. Killed after 30 s so it cannot hang a run. */
  public void stop() {
    if (process == null || !process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping " + this, e);
    }
  }

  /** SIGKILL of the server, as a crash: open transactions are gone, InnoDB recovers at {@link #restart()}. */
  public void kill() {
    if (process != null && process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while killing " + this, e);
      }
    }
  }

  /** Starts a server {@link #stop() stopped} or {@link #kill() killed} before again, on the same port and data dir. */
  public void restart() {
    if (process == null || !process.isAlive()) {
      startServer();
    }
  }

  @Override
  public void close() {
    try {
      stop();
    } finally {
      Processes.deleteTree(root);
    }
  }

  @Override
  public String toString() {
    return "MariaDB 127.0.0.1:" + port + (process != null && process.isAlive() ? " (pid " + process.pid() + ")"
        : " (not running)");
  }

  /**
   * A copy of a data directory that mariadb-install-db made once for this test JVM: every server starts from the same
   * freshly initialized one, at a fraction of mariadb-install-db's cost (0.5 to 2 s on a busy two-core machine).
   */
  private void init() {
    Processes.Result copy = Processes.run(COMMAND_TIMEOUT, Map.of(), List.of("cp", "-a", template().toString(),
        dataDir.toString()));
    if (!copy.ok()) {
      throw new IllegalStateException("cannot copy the MariaDB template data dir " + template() + " to " + dataDir
          + ": " + copy.stderr());
    }
  }

  private static Path template;

  /** The data directory mariadb-install-db made for this JVM (deleted when it exits); made on first use. */
  private static synchronized Path template() {
    if (template == null) {
      Path dir = Processes.tempDirUntilExit("fencing-mariadb-template-");
      Path data = dir.resolve("data");
      List<String> command = new ArrayList<>(List.of(binary("mariadb-install-db").toString(), "--no-defaults",
          "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"));
      command.addAll(userOption());
      Processes.Result result = Processes.run(COMMAND_TIMEOUT, Map.of(), command);
      if (!result.ok()) {
        throw new IllegalStateException("mariadb-install-db failed (exit " + result.exitCode() + "): "
            + result.stdout() + result.stderr());
      }
      template = data;
    }
    return template;
  }

  private void startServer() {
    List<String> command = new ArrayList<>(List.of(binary("mariadbd").toString(), "--no-defaults",
        "--datadir=" + dataDir, "--port=" + port, "--bind-address=127.0.0.1",
        "--socket=" + root.resolve("mysqld.sock"), "--pid-file=" + root.resolve("mysqld.pid"),
        "--log-error=" + logFile, "--skip-log-bin", "--innodb-flush-log-at-trx-commit=2",
        "--innodb-buffer-pool-size=128M", "--max-connections=100"));
    command.addAll(userOption());
    try {
      process = Processes.reapOnExit(new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(root.resolve("mariadbd.out").toFile()))
          .start());
      process.getOutputStream().close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start mariadbd; see " + logFile, e);
    }
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (true) {
      Processes.Result ping = Processes.run(COMMAND_TIMEOUT, Map.of(), List.of(binary("mariadb-admin").toString(),
          "--no-defaults", "-h127.0.0.1", "-P" + port, "-uroot", "ping"));
      if (ping.ok()) {
        return;
      }
      if (!process.isAlive() || System.nanoTime() > deadline) {
        throw new IllegalStateException("MariaDB did not start on port " + port + ": " + ping.stderr() + "\n"
            + logTail(40));
      }
      Processes.sleep(100);
    }
  }

  /** mariadbd and mariadb-install-db refuse to run as root unless told to. */
  private static List<String> userOption() {
    return PostgresServer.isRoot() ? List.of("--user=root") : List.of();
  }

  /** The Debian package puts mariadbd in /usr/sbin, which a non-root PATH often lacks. */
  private static Path binary(String name) {
    Path sbin = Path.of("/usr/sbin", name);
    if (Files.isExecutable(sbin)) {
      return sbin;
    }
    return Processes.executable(name, INSTALL_HINT);
  }
}
