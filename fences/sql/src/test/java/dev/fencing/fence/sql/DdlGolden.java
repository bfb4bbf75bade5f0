package dev.fencing.fence.sql;

import dev.fencing.fence.store.SqlDialect;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every rendering {@link SqlFenceDdl} offers, for each dialect and mode the installer and {@code sql print} use, as
 * text keyed by the golden file's path under {@code src/test/resources/golden-ddl/}. {@link SqlFenceDdlGoldenTest}
 * compares them; {@link #main} writes them (run it after a deliberate DDL change, then review the diff):
 * {@code java -cp fences/sql/target/classes:fences/sql/target/test-classes dev.fencing.fence.sql.DdlGolden
 * fences/sql/src/test/resources/golden-ddl} (no H2 needed).
 */
final class DdlGolden {

  /** Where the golden files live, relative to the test class path root. */
  static final String ROOT = "golden-ddl/";

  private record Mode(String name, boolean perRow, boolean permissive, boolean addTokenColumn) {
  }

  private static final List<Mode> MODES = List.of(
      new Mode("table-strict", false, false, true),
      new Mode("table-permissive", false, true, true),
      new Mode("row-strict", true, false, true),
      new Mode("row-strict-existing-column", true, false, false),
      new Mode("row-permissive", true, true, true),
      new Mode("row-permissive-existing-column", true, true, false));

  private DdlGolden() {
  }

  /** Path (dialect/file) to the rendered text. */
  static Map<String, String> render() {
    Map<String, String> out = new TreeMap<>();
    for (SqlDialect dialect : SqlDialect.values()) {
      SqlFenceDdl ddl = new SqlFenceDdl(dialect);
      String dir = dialect.cliName() + "/";
      // The installer passes names as the database reports them (qualified); a caller may also pass unqualified ones.
      for (TableName table : List.of(new TableName("shop", "Orders"), new TableName(null, "orders"))) {
        String where = table.schema() == null ? "unqualified" : "qualified";
        for (Mode mode : MODES) {
          SqlFence fence = new SqlFence(table, "ledger.eu-1_a", mode.perRow(), mode.permissive());
          StringBuilder b = new StringBuilder();
          b.append("-- triggers: ").append(ddl.triggerNames(fence)).append("\n\n");
          b.append(statements(ddl.install(fence, mode.addTokenColumn())));
          out.put(dir + "install-" + mode.name() + "-" + where + ".txt", b.toString());
        }
        for (boolean perRow : List.of(false, true)) {
          SqlFence fence = new SqlFence(table, "ledger", perRow, false);
          List<String> triggers = ddl.triggerNames(fence);
          StringBuilder b = new StringBuilder();
          b.append("-- the fence's triggers only\n").append(statements(ddl.uninstall(table, triggers, false, false)));
          b.append("-- the last fence of the schema, with the token column\n")
              .append(statements(ddl.uninstall(table, triggers, true, true)));
          b.append("-- unregister\n").append(statements(List.of(ddl.unregister(table))));
          b.append("-- privileges\n").append(statements(ddl.privileges(table)));
          out.put(dir + "uninstall-" + (perRow ? "row" : "table") + "-" + where + ".txt", b.toString());
        }
      }
      // sql print: names folded as the database folds unquoted identifiers.
      for (String table : List.of("Shop.Orders", "Orders")) {
        String where = table.contains(".") ? "qualified" : "unqualified";
        for (Mode mode : MODES) {
          if (!mode.addTokenColumn()) {
            continue;
          }
          SqlFence fence = new SqlFence(TableName.parse(table), "ledger", mode.perRow(), mode.permissive());
          out.put(dir + "print-" + mode.name() + "-" + where + ".sql", ddl.forPrint(fence));
        }
      }
      // The tokened outbox and a receiver's processed-events table.
      OutboxDdl outbox = new OutboxDdl(dialect);
      for (TableName table : List.of(new TableName("shop", "events_out"), new TableName(null, "events_out"))) {
        String where = table.schema() == null ? "unqualified" : "qualified";
        SqlOutbox o = new SqlOutbox(table, "ledger.eu-1_a");
        out.put(dir + "outbox-install-" + where + ".txt", "-- triggers: " + outbox.triggerNames(o) + "\n\n"
            + statements(outbox.install(o)));
        out.put(dir + "outbox-print-" + where + ".sql", outbox.forPrint(new SqlOutbox(table, "ledger")));
      }
      SqlOutbox o = new SqlOutbox(new TableName("shop", "events_out"), "ledger");
      out.put(dir + "outbox-uninstall.txt", statements(outbox.uninstall(o)));
      out.put(dir + "processed-events-print.sql", outbox.forPrintProcessedEvents(TableName.parse("Shop.Processed")));
    }
    return out;
  }

  private static String statements(List<SqlFenceDdl.Statement> statements) {
    StringBuilder b = new StringBuilder();
    for (SqlFenceDdl.Statement st : statements) {
      b.append("-- [").append(st.kind().name().toLowerCase(Locale.ROOT)).append(' ').append(st.object()).append("]\n")
          .append(st.sql()).append("\n\n");
    }
    return b.toString();
  }

  public static void main(String[] args) throws IOException {
    Path root = Path.of(args[0]);
    List<String> written = new ArrayList<>();
    for (Map.Entry<String, String> e : render().entrySet()) {
      Path file = root.resolve(e.getKey());
      Files.createDirectories(file.getParent());
      Files.writeString(file, e.getValue(), StandardCharsets.UTF_8);
      written.add(e.getKey());
    }
    System.out.println("wrote " + written.size() + " files under " + root);
  }
}
