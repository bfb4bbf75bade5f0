package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A real PostgreSQL 15 server from the Debian packages, in its own temporary directory on a free loopback port, with
 * trust authentication for user {@code postgres} and fsync off: fences are tested against the real trigger language,
 * lock manager and isolation levels, which no embedded imitation has. PostgreSQL refuses to run as root, so as root
 * the binaries run as the {@code postgres} user that the package creates.
 */
public final class PostgresServer implements AutoCloseable {

  /** PostgreSQL's binaries: {@code -Dfencing.it.postgres.bin}, by default Debian 12's PostgreSQL 15. */
  static final Path BIN = Path.of(System.getProperty("fencing.it.postgres.bin",
      "/usr/lib/postgresql/15/bin"));
  private static final String INSTALL_HINT = " is missing: run `apt-get update && apt-get install -y postgresql` "
      + "(Debian 12, PostgreSQL 15) — the SQL fence tests need a real PostgreSQL";
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);
  private static final String USER = "postgres";

  private final Path root;
  private final Path dataDir;
  private final Path logFile;
  private final int port;
  private final List<String> settings;
  private boolean running;

  private PostgresServer(Path root, int port, List<String> settings) {
    this.settings = settings;
    this.root = root;
    this.dataDir = root.resolve("data");
    this.logFile = root.resolve("pg.log");
    this.port = port;
  }

  /** A new server (a fresh cluster, as initdb makes it) started; running on return. */
  public static PostgresServer start() {
    return start(new String[0]);
  }

  /**
   * As {@link #start()}, with server settings {@code name=value} added to the command line (each one {@code -c}),
   * e.g. {@code wal_level=logical}, {@code max_replication_slots=4} and {@code max_wal_senders=4} for logical
   * decoding (Debezium).
   */
  public static PostgresServer start(String... settings) {
    for (String s : settings) {
      if (!s.matches("[a-z_.]+=[A-Za-z0-9_.:/-]+")) {
        throw new IllegalArgumentException("PostgreSQL setting '" + s + "': expected name=value, e.g. "
            + "wal_level=logical");
      }
    }
    binary("initdb");
    binary("pg_ctl");
    Path root;
    try {
      root = Files.createTempDirectory("fencing-pg-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    PostgresServer server = new PostgresServer(root, Ports.freePort(), List.of(settings));
    try {
      server.init();
      server.startServer();
      return server;
    } catch (RuntimeException | Error e) {
      server.close();
      throw e;
    }
  }

  /** JDBC URL of database {@code postgres} as user {@code postgres} (no password). */
  public String jdbcUrl() {
    return jdbcUrl("postgres");
  }

  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=" + USER;
  }

  public String user() {
    return USER;
  }

  /** The directory of the server's Unix socket ({@code .s.PGSQL.<port>}): a pooler on this host may use it. */
  public Path socketDirectory() {
    return root;
  }

  public int port() {
    return port;
  }

  public Path logFile() {
    return logFile;
  }

  /** The end of the server log, for failure messages. */
  public String logTail(int lines) {
    return Processes.tail(logFile, lines);
  }

  /** Fast shutdown (open transactions are rolled back); the data dir stays until {@link #close()}. */
  public void stop() {
    if (running) {
      running = false;
      run(List.of(binary("pg_ctl").toString(), "-D", dataDir.toString(), "-m", "fast", "-w", "-t", "30", "stop"));
    }
  }

  /**
   * Immediate shutdown, as a crash: every backend is ended at once, open transactions are gone, and the next start
   * replays the WAL. The data dir stays until {@link #close()}; {@link #restart()} brings the server back.
   */
  public void crash() {
    if (running) {
      running = false;
      run(List.of(binary("pg_ctl").toString(), "-D", dataDir.toString(), "-m", "immediate", "-w", "-t", "30",
          "stop"));
    }
  }

  /** Starts a server {@link #stop() stopped} before again, on the same port and data directory (an outage's end). */
  public void restart() {
    if (!running) {
      startServer();
    }
  }

  /** Stops the server if it runs and deletes its directory. */
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
    return "PostgreSQL 127.0.0.1:" + port + (running ? "" : " (not running)");
  }

  /**
   * A copy of a data directory that initdb made once for this test JVM: every server starts from the same freshly
   * initialized cluster, at a tenth of initdb's cost (initdb takes about 2 s on a busy two-core machine).
   */
  private void init() {
    handToServerUser(root);
    run(List.of("cp", "-a", template().toString(), dataDir.toString()));
  }

  private static Path template;

  /** The data directory initdb made for this JVM (deleted when it exits); made on first use. */
  private static synchronized Path template() {
    if (template == null) {
      Path dir = Processes.tempDirUntilExit("fencing-pg-template-");
      handToServerUser(dir);
      Path data = dir.resolve("data");
      run(List.of(binary("initdb").toString(), "-D", data.toString(), "-U", USER, "--auth=trust", "-E", "UTF8",
          "--locale=C", "--no-sync"));
      template = data;
    }
    return template;
  }

  /** As root, {@code dir} (and the data and log inside it) must belong to the user the server runs as. */
  private static void handToServerUser(Path dir) {
    if (isRoot()) {
      Processes.Result chown = Processes.run(COMMAND_TIMEOUT, Map.of(), List.of("chown", USER + ":" + USER,
          dir.toString()));
      if (!chown.ok()) {
        throw new IllegalStateException("cannot hand " + dir + " to user " + USER + ": " + chown.stderr());
      }
    }
  }

  private void startServer() {
    String options = "-p " + port + " -k " + root + " -c listen_addresses=127.0.0.1 -c fsync=off"
        + " -c synchronous_commit=off -c full_page_writes=off -c max_connections=50";
    for (String s : settings) {
      options += " -c " + s;
    }
    Processes.Result result = Processes.run(COMMAND_TIMEOUT, Map.of(), command(List.of(binary("pg_ctl").toString(),
        "-D", dataDir.toString(), "-l", logFile.toString(), "-w", "-t", "30", "-o", options, "start")));
    if (!result.ok()) {
      throw new IllegalStateException("PostgreSQL did not start on port " + port + ": " + result.stdout()
          + result.stderr() + "\n" + logTail(40));
    }
    running = true;
    Ports.awaitOpen(port, Duration.ofSeconds(10));
  }

  private static void run(List<String> command) {
    Processes.Result result = Processes.run(COMMAND_TIMEOUT, Map.of(), command(command));
    if (!result.ok()) {
      throw new IllegalStateException(String.join(" ", command) + " failed (exit " + result.exitCode() + "): "
          + result.stdout() + result.stderr());
    }
  }

  /** As root, the command runs as user postgres (runuser); otherwise as the current user. */
  private static List<String> command(List<String> command) {
    if (!isRoot()) {
      return command;
    }
    List<String> wrapped = new ArrayList<>(List.of("runuser", "-u", USER, "--"));
    wrapped.addAll(command);
    return wrapped;
  }

  static boolean isRoot() {
    return "root".equals(System.getProperty("user.name"));
  }

  private static Path binary(String name) {
    Path path = BIN.resolve(name);
    if (!Files.isExecutable(path)) {
      throw new IllegalStateException(path + INSTALL_HINT);
    }
    return path;
  }
}
