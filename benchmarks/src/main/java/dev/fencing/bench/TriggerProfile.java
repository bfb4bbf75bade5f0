package dev.fencing.bench;

import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.TableName;
import dev.fencing.protocol.SessionVariables;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a fenced UPDATE's extra time goes, measured inside PostgreSQL: EXPLAIN ANALYZE of the benchmark's single-row
 * UPDATE reports its statement trigger's time. Three tables side by side, in alternating blocks on one session: the
 * installed fence (table mode), an empty PL/pgSQL statement trigger (the cost of firing any trigger), and the least
 * any PL/pgSQL fence must do (one advisory lock, then one read of the fence row; no validation, no error paths).
 */
public final class TriggerProfile {
  private static final Pattern TRIGGER_TIME = Pattern.compile("Trigger [^:]+: time=([0-9.]+)");
  private static final String LOCK = "bench-trigger";
  private static final String[] TABLES = {"trig_fence", "trig_empty", "trig_minimal"};

  private TriggerProfile() {}

  /** Standalone: TriggerProfile &lt;JDBC URL of an empty database&gt; [statements]. */
  public static void main(String[] args) throws SQLException {
    run(args[0], args.length > 1 ? Integer.parseInt(args[1]) : 3000);
  }

  /** Prints a table of median (p25-p75) trigger µs per statement for the three triggers. */
  static void run(String jdbcUrl, int statements) throws SQLException {
    try (Connection c = DriverManager.getConnection(jdbcUrl); Statement s = c.createStatement()) {
      for (String t : TABLES) {
        s.execute("CREATE TABLE " + t + " (id INT PRIMARY KEY, v BIGINT NOT NULL)");
        s.execute("INSERT INTO " + t + " VALUES (1, 0)");
      }
      new SqlFenceInstaller(c).install(new SqlFence(TableName.parse("trig_fence"), LOCK, false, false));
      s.execute("CREATE FUNCTION trig_empty() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$");
      s.execute("CREATE FUNCTION trig_minimal() RETURNS trigger LANGUAGE plpgsql AS $$\n"
          + "DECLARE v_token bigint := current_setting('" + SessionVariables.PG_TOKEN + "', true)::bigint;"
          + " v_fence bigint;\n"
          + "BEGIN\n"
          + "  PERFORM pg_advisory_xact_lock_shared(1, hashtext(TG_ARGV[0]));\n"
          + "  SELECT f.token INTO v_fence FROM fencing_fence f WHERE f.lock_name = TG_ARGV[0];\n"
          + "  IF v_token = v_fence THEN RETURN NULL; END IF;\n"
          + "  RAISE EXCEPTION 'stale';\n"
          + "END $$");
      s.execute("CREATE TRIGGER t BEFORE UPDATE ON trig_empty FOR EACH STATEMENT EXECUTE FUNCTION trig_empty()");
      s.execute("CREATE TRIGGER t BEFORE UPDATE ON trig_minimal FOR EACH STATEMENT EXECUTE FUNCTION trig_minimal('"
          + LOCK + "')");
      s.execute("SELECT set_config('" + SessionVariables.PG_LOCK + "', '" + LOCK + "', false), set_config('"
          + SessionVariables.PG_TOKEN + "', '7', false)");
      s.execute("UPDATE trig_fence SET v = v + 1 WHERE id = 1"); // advances the fence to 7: later writes are same-token
      List<List<Double>> times = new ArrayList<>();
      for (String t : TABLES) {
        times.add(new ArrayList<>());
      }
      int block = 100;
      for (int done = 0; done < statements; done += block) {
        for (int i = 0; i < TABLES.length; i++) {
          for (int k = 0; k < block; k++) {
            times.get(i).add(triggerMicros(s, TABLES[i]));
          }
        }
      }
      System.out.println("Statement trigger time inside PostgreSQL (EXPLAIN ANALYZE, " + statements
          + " autocommit UPDATEs each, one session, alternating blocks):");
      System.out.println("| trigger | median µs | p25–p75 µs |");
      System.out.println("|---|---:|---|");
      String[] names = {"the fence (table mode, same token)", "empty PL/pgSQL trigger (firing any trigger)",
          "least a PL/pgSQL fence does (lock + one read)"};
      for (int i = 0; i < TABLES.length; i++) {
        List<Double> v = times.get(i);
        v.sort(null);
        System.out.printf(Locale.ROOT, "| %s | %.0f | %.0f–%.0f |%n", names[i], v.get(v.size() / 2),
            v.get(v.size() / 4), v.get(v.size() * 3 / 4));
      }
    }
  }

  private static double triggerMicros(Statement s, String table) throws SQLException {
    try (ResultSet rs = s.executeQuery("EXPLAIN (ANALYZE, SUMMARY OFF, COSTS OFF) UPDATE " + table
        + " SET v = v + 1 WHERE id = 1")) {
      while (rs.next()) {
        Matcher m = TRIGGER_TIME.matcher(rs.getString(1));
        if (m.find()) {
          return Double.parseDouble(m.group(1)) * 1000;
        }
      }
    }
    throw new IllegalStateException("no trigger time in the plan of " + table);
  }
}
