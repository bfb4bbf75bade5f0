package dev.fencing.fence.sql;

import dev.fencing.fence.store.SqlDialect;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.Set;

/**
 * {@code java -jar fencing-agent.jar sql ...}: prints, installs and removes SQL fences. The agent CLI passes the
 * arguments after {@code sql} (a leading {@code sql} is skipped too). Exit code 0 on success, 1 when the database or
 * a file said no, 2 for bad arguments (with the usage text).
 */
public final class SqlFenceCli {

  public static final String USAGE = ""
      + "usage:\n"
      + "  sql print     --dialect postgresql|mysql|h2 --table T --lock L [--per-row] [--permissive]\n"
      + "  sql print     --dialect postgresql|mysql|h2 --outbox T --lock L\n"
      + "  sql print     --dialect postgresql|mysql|h2 --processed-events T\n"
      + "  sql install   --jdbc-url URL [--user U --password-file F] [--driver-jar J] --table T --lock L\n"
      + "                [--per-row] [--permissive]\n"
      + "  sql install   --jdbc-url URL [connection options] --outbox T --lock L\n"
      + "  sql install   --jdbc-url URL [connection options] --processed-events T\n"
      + "  sql uninstall --jdbc-url URL [--user U --password-file F] [--driver-jar J] --table T [--lock L]\n"
      + "  sql uninstall --jdbc-url URL [connection options] --outbox T | --processed-events T\n"
      + "\n"
      + "  print      the DDL of a fence, for migration tools (Flyway, Liquibase); names as the database folds them\n"
      + "  install    creates the fence table, functions and triggers; idempotent; rolls back or undoes on failure;\n"
      + "             prints what it granted or revoked and what writers need\n"
      + "  uninstall  removes the table's fence triggers (and the fencing_token column if install added it)\n"
      + "\n"
      + "  --table       [schema.]table, letters, digits and _ only\n"
      + "  --lock        the lock whose tokens the table accepts (the agent's fencing.lock)\n"
      + "  --per-row     a fencing_token column on each row instead of the table-wide fence row\n"
      + "  --permissive  let writes without a token through (a malformed token is still rejected)\n"
      + "  --outbox      a tokened outbox table: created with its triggers, inserts need the lock's token;\n"
      + "                uninstall drops it (refused while events are pending)\n"
      + "  --processed-events  a receiver's table of applied event ids (ProcessedEvents.markFirst);\n"
      + "                uninstall drops it (refused while it holds ids)\n"
      + "  --driver-jar  a JDBC driver jar, when the driver is not on the class path\n"
      + "\n"
      + "Rejections: SQLSTATE FN001 stale token, FN002 missing or malformed token; the agent blocks with FN003.\n";

  /** What a command works on: a fenced table, a tokened outbox, or a processed-events table. */
  private enum Target {
    FENCE("--table"), OUTBOX("--outbox"), PROCESSED_EVENTS("--processed-events");

    final String option;

    Target(String option) {
      this.option = option;
    }
  }

  private static final List<String> CONNECTION = List.of("--jdbc-url", "--user", "--password-file", "--driver-jar");

  private static final Set<String> FLAGS = Set.of("--per-row", "--permissive");
  private static final Set<String> OPTIONS = Set.of("--dialect", "--table", "--lock", "--jdbc-url", "--user",
      "--password-file", "--driver-jar", "--outbox", "--processed-events");

  private SqlFenceCli() {
  }

  public static int run(String[] args, PrintStream out) {
    List<String> list = Arrays.asList(args);
    if (!list.isEmpty() && list.get(0).equals("sql")) {
      list = list.subList(1, list.size());
    }
    if (list.isEmpty() || List.of("--help", "-h", "help").contains(list.get(0))) {
      out.print(USAGE);
      return list.isEmpty() ? 2 : 0;
    }
    String command = list.get(0);
    Map<String, String> options;
    try {
      options = CliArgs.parse(list.subList(1, list.size()), FLAGS, OPTIONS, null);
      switch (command) {
        case "print":
          return print(options, out);
        case "install":
        case "uninstall":
          return connected(command, options, out);
        default:
          throw new IllegalArgumentException("unknown sql command '" + command + "'");
      }
    } catch (IllegalArgumentException e) {
      out.println("sql: " + e.getMessage());
      out.print(USAGE);
      return 2;
    }
  }

  private static int print(Map<String, String> options, PrintStream out) {
    Target target = target(options);
    switch (target) {
      case OUTBOX:
        allow(options, target, "--dialect", "--outbox", "--lock");
        break;
      case PROCESSED_EVENTS:
        allow(options, target, "--dialect", "--processed-events");
        break;
      default:
        allow(options, target, "--dialect", "--table", "--lock", "--per-row", "--permissive");
    }
    SqlDialect dialect = SqlDialect.fromName(required(options, "--dialect"));
    switch (target) {
      case OUTBOX:
        out.print(new OutboxDdl(dialect).forPrint(outbox(options)));
        break;
      case PROCESSED_EVENTS:
        out.print(new OutboxDdl(dialect).forPrintProcessedEvents(TableName.parse(options.get("--processed-events"))));
        break;
      default:
        out.print(new SqlFenceDdl(dialect).forPrint(fence(options)));
    }
    return 0;
  }

  private static int connected(String command, Map<String, String> options, PrintStream out) {
    boolean install = command.equals("install");
    Target target = target(options);
    List<String> allowed = new ArrayList<>(CONNECTION);
    allowed.add(target.option);
    if (target == Target.FENCE) {
      allowed.add("--lock");
      if (install) {
        allowed.addAll(List.of("--per-row", "--permissive"));
      }
    } else if (target == Target.OUTBOX && install) {
      allowed.add("--lock");
    }
    allow(options, target, allowed.toArray(new String[0]));
    String url = required(options, "--jdbc-url");
    SqlFence fence = install && target == Target.FENCE ? fence(options) : null;
    SqlOutbox outbox = install && target == Target.OUTBOX ? outbox(options) : null;
    TableName table = TableName.parse(required(options, target.option));
    if (!install && options.containsKey("--lock")) {
      new SqlFence(table, options.get("--lock"), false, false);
    }
    if (options.containsKey("--password-file") && !options.containsKey("--user")) {
      throw new IllegalArgumentException("--password-file needs --user");
    }
    try (Connection connection = connect(url, options)) {
      SqlFenceInstaller.Outcome outcome;
      if (target == Target.FENCE) {
        SqlFenceInstaller installer = new SqlFenceInstaller(connection);
        outcome = install ? installer.install(fence) : installer.uninstall(table);
      } else {
        OutboxInstaller installer = new OutboxInstaller(connection);
        if (target == Target.OUTBOX) {
          outcome = install ? installer.install(outbox) : installer.uninstall(table);
        } else {
          outcome = install ? installer.installProcessedEvents(table) : installer.uninstallProcessedEvents(table);
        }
      }
      out.println(outcome.summary());
      for (String line : outcome.privileges()) {
        out.println(line);
      }
      return 0;
    } catch (SQLException e) {
      out.println("sql " + command + " failed: " + e.getMessage()
          + (e.getSQLState() == null ? "" : " (SQLSTATE " + e.getSQLState() + ")"));
      return 1;
    } catch (IOException e) {
      out.println("sql " + command + " failed: " + e.getMessage());
      return 1;
    }
  }

  /** Exactly one of --table, --outbox, --processed-events. */
  private static Target target(Map<String, String> options) {
    List<String> given = new ArrayList<>();
    Target found = null;
    for (Target t : Target.values()) {
      if (options.containsKey(t.option)) {
        given.add(t.option);
        found = t;
      }
    }
    if (given.size() > 1) {
      throw new IllegalArgumentException(String.join(" and ", given) + " exclude each other: name one table, a "
          + "fenced table (--table), a tokened outbox (--outbox) or a processed-events table (--processed-events)");
    }
    if (found == null) {
      throw new IllegalArgumentException("missing --table (or --outbox, --processed-events)");
    }
    return found;
  }

  /** A connection from the CLI options --user, --password-file (first line), --driver-jar (also for fence reset). */
  public static Connection connect(String url, Map<String, String> options) throws SQLException, IOException {
    Properties props = new Properties();
    if (options.containsKey("--user")) {
      props.setProperty("user", options.get("--user"));
    }
    if (options.containsKey("--password-file")) {
      Path file = Path.of(options.get("--password-file"));
      if (!Files.isReadable(file)) {
        throw new IOException("cannot read the password file " + file);
      }
      String first = Files.readAllLines(file, StandardCharsets.UTF_8).stream().findFirst().orElse("");
      props.setProperty("password", first);
    }
    String jar = options.get("--driver-jar");
    if (jar != null) {
      Path path = Path.of(jar);
      if (!Files.isRegularFile(path)) {
        throw new IOException("no driver jar at " + path);
      }
      // DriverManager ignores drivers of class loaders other than the caller's: ask the jar's drivers directly.
      URLClassLoader loader = new URLClassLoader(new URL[] {path.toUri().toURL()},
          SqlFenceCli.class.getClassLoader());
      for (Driver driver : ServiceLoader.load(Driver.class, loader)) {
        if (driver.acceptsURL(url)) {
          Connection c = driver.connect(url, props);
          if (c != null) {
            return c;
          }
        }
      }
      throw new SQLException("no driver in " + path + " accepts " + url, "08001");
    }
    try {
      return DriverManager.getConnection(url, props);
    } catch (SQLException e) {
      if ("08001".equals(e.getSQLState()) && e.getMessage() != null && e.getMessage().contains("No suitable driver")) {
        throw new SQLException("no JDBC driver for " + url + " on the class path: pass --driver-jar <driver.jar>",
            "08001", e);
      }
      throw e;
    }
  }

  private static SqlFence fence(Map<String, String> options) {
    return new SqlFence(TableName.parse(required(options, "--table")), required(options, "--lock"),
        options.containsKey("--per-row"), options.containsKey("--permissive"));
  }

  private static SqlOutbox outbox(Map<String, String> options) {
    TableName table = TableName.parse(required(options, "--outbox"));
    if (!options.containsKey("--lock")) {
      throw new IllegalArgumentException("--outbox needs --lock: the lock whose tokens may write events");
    }
    return new SqlOutbox(table, required(options, "--lock"));
  }

  private static void allow(Map<String, String> options, Target target, String... allowed) {
    List<String> ok = Arrays.asList(allowed);
    for (String key : options.keySet()) {
      if (!ok.contains(key)) {
        throw new IllegalArgumentException(key + " does not apply here" + (target == Target.FENCE ? ""
            : " (with " + target.option + ")"));
      }
    }
  }

  private static String required(Map<String, String> options, String key) {
    String value = options.get(key);
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException("missing " + key);
    }
    return value;
  }
}
