package dev.fencing.agent.cli;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigKey;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.lease.LeaseProviders;
import dev.fencing.agent.lease.LeaseProvider;
import dev.fencing.agent.log.AgentLog;
import dev.fencing.fence.sql.CliArgs;
import dev.fencing.fence.sql.FenceReset;
import dev.fencing.fence.sql.SqlFenceCli;
import dev.fencing.fence.sql.TableName;
import java.io.IOException;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code java -jar fencing-agent.jar fence reset ...}: repairs a poisoned fence (a forged or buggy huge token that locks
 * every legitimate writer out) by setting the fence token of the lock in {@code fencing_fence} back to the
 * coordinator's current token: the holder's token (its lock key's create revision, docs/DESIGN.md section 4), or, when
 * nobody holds the lock, etcd's current revision, which no past holder's token exceeds and every future holder's
 * does. Prints one audit line. Exit 0 done (or nothing to do), 1 refused or failed, 2 bad arguments.
 */
final class FenceResetCli {

  static final String USAGE = ""
      + "usage:\n"
      + "  fence reset lock=L [etcd.endpoints=URLS ...] --jdbc-url URL [--user U --password-file F] [--driver-jar J]\n"
      + "              [--schema S] [--token N] [--lower]\n"
      + "\n"
      + "  Sets the fence token of lock L in fencing_fence (SQL fences, and the JDBC store of HTTP fences) to\n"
      + "  the coordinator's current token: the lock holder's token, or etcd's current revision when nobody holds it.\n"
      + "  The Kafka consumer fence's advances of L above it (fencing_kafka_fence) are deleted with --lower.\n"
      + "  key=value arguments are the agent's keys (lock, etcd.*), as for doctor.\n"
      + "\n"
      + "  --token N   set N instead (at most the coordinator's token; a higher one is refused)\n"
      + "  --lower     required to lower a fence (the repair of a poisoned one): without it a fence above the target\n"
      + "              is left as it is\n"
      + "  --schema S  schema (MariaDB/MySQL: database) of fencing_fence, if not the connection's default\n"
      + "\n"
      + "Services running an HTTP fence keep the highest admitted token in memory: restart them after a reset.\n";

  private static final Set<String> FLAGS = Set.of("--lower");
  private static final Set<String> OPTIONS = Set.of("--jdbc-url", "--user", "--password-file", "--driver-jar",
      "--schema", "--token");

  private FenceResetCli() {}

  static int run(String[] args, PrintStream out) {
    List<String> list = List.of(args);
    if (list.isEmpty() || List.of("--help", "-h", "help").contains(list.get(0))) {
      out.print(USAGE);
      return list.isEmpty() ? 2 : 0;
    }
    if (!list.get(0).equals("reset")) {
      out.println("fence: unknown command '" + list.get(0) + "'");
      out.print(USAGE);
      return 2;
    }
    Map<String, String> options = Map.of();
    List<String> keyValues = new ArrayList<>();
    AgentConfig config;
    Long requested = null;
    try {
      options = CliArgs.parse(list.subList(1, list.size()), FLAGS, OPTIONS, keyValues);
      if (!options.containsKey("--jdbc-url")) {
        throw new IllegalArgumentException("missing --jdbc-url");
      }
      if (options.containsKey("--password-file") && !options.containsKey("--user")) {
        throw new IllegalArgumentException("--password-file needs --user");
      }
      String schema = options.get("--schema");
      if (schema != null && !TableName.isIdentifier(schema)) {
        throw new IllegalArgumentException("invalid --schema '" + schema + "': letters, digits and _ only");
      }
      if (options.containsKey("--token")) {
        requested = token(options.get("--token"));
      }
      config = ConfigLoader.load(String.join(",", keyValues));
      if (!config.valid()) {
        throw new IllegalArgumentException(String.join("; ", config.problems()));
      }
      if (!config.leaseEnabled() || "(unset)".equals(config.lock())) {
        throw new IllegalArgumentException("name the lock: lock=<name>");
      }
    } catch (IllegalArgumentException e) {
      out.println("fence reset: " + e.getMessage());
      out.print(USAGE);
      return 2;
    }
    String lock = config.lock();

    long coordinator;
    String basis;
    try (LeaseProvider etcd = LeaseProviders.create(config)) {
      Optional<LeaseProvider.Holder> holder = etcd.holder(lock, config.etcdTimeout());
      if (holder.isPresent()) {
        coordinator = holder.get().token;
        basis = "holder " + holder.get().holderId + " token " + coordinator;
      } else {
        coordinator = etcd.revision(config.etcdTimeout());
        basis = "not held, " + LeaseProviders.name(config) + " revision " + coordinator;
      }
    } catch (Exception e) {
      out.println("fence reset failed: cannot read lock '" + lock + "' from " + LeaseProviders.describe(config)
          + " within " + config.display(ConfigKey.ETCD_TIMEOUT) + ": " + AgentLog.describe(e));
      return 1;
    }
    long target = requested != null ? requested : coordinator;
    if (target > coordinator) {
      out.println("fence reset refused: token " + target + " is above the coordinator's token " + coordinator + " for lock '"
          + lock + "' (" + basis + "): a fence above it would reject the current and the next holders, which is the "
          + "poisoning this command repairs");
      return 1;
    }

    String schema = options.get("--schema");
    String where = redact(options.get("--jdbc-url")) + " " + FenceReset.table(schema);
    try (Connection c = SqlFenceCli.connect(options.get("--jdbc-url"), options)) {
      long before;
      try {
        before = FenceReset.set(c, schema, lock, target, options.containsKey("--lower"));
      } catch (FenceReset.Refused r) {
        out.println("fence reset refused: the fence token " + r.current() + " of lock '" + lock + "' in " + where
            + " is above the target " + target + " (" + basis + "). A fence is only ever lowered on purpose: if it was"
            + " poisoned (a forged or buggy token above the coordinator's), re-run with --lower");
        return 1;
      }
      String outcome = before == target ? "unchanged" : before < 0 ? "created" : before > target ? "lowered" : "raised";
      out.println(audit(lock, before, target, basis, where, outcome));
      return 0;
    } catch (SQLException e) {
      out.println("fence reset failed on " + where + ": " + e.getMessage()
          + (e.getSQLState() == null ? "" : " (SQLSTATE " + e.getSQLState() + ")"));
      return 1;
    } catch (IOException | RuntimeException e) {
      out.println("fence reset failed on " + where + ": " + AgentLog.describe(e));
      return 1;
    }
  }

  /** The one audit line: when, who, lock, old and new token, what the coordinator said, where, outcome. */
  static String audit(String lock, long before, long after, String basis, String where, String outcome) {
    return "fencing-audit: fence reset at=" + Instant.now().truncatedTo(ChronoUnit.MILLIS) + " by="
        + System.getProperty("user.name", "?") + "@" + ConfigLoader.hostName() + " lock=" + lock + " old=" + (before < 0 ? "none" : before)
        + " new=" + after + " outcome=" + outcome + " coordinator=(" + basis + ") target=" + where;
  }

  /** The JDBC URL without credentials or properties (user, password, ssl keys may be in them). */
  static String redact(String url) {
    String u = url;
    int cut = u.length();
    for (char c : new char[] {'?', ';', '&'}) {
      int i = u.indexOf(c);
      if (i >= 0) {
        cut = Math.min(cut, i);
      }
    }
    u = u.substring(0, cut);
    int scheme = u.indexOf("//");
    int at = u.indexOf('@', Math.max(scheme, 0));
    if (scheme >= 0 && at > scheme) {
      u = u.substring(0, scheme + 2) + u.substring(at + 1);
    }
    return u;
  }

  private static long token(String text) {
    try {
      long t = Long.parseLong(text.trim());
      if (t > 0) {
        return t;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException("invalid --token '" + text + "': expected an integer from 1 to " + Long.MAX_VALUE);
  }
}
