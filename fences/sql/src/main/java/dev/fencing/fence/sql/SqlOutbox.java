package dev.fencing.fence.sql;

import java.util.Locale;
import java.util.Objects;

/**
 * A tokened outbox to install: its table (created by the installer) and the lock whose tokens may write events into
 * it. Its ordering counters live beside it in {@code <table>_key}.
 */
public record SqlOutbox(TableName table, String lock) {

  /** Appended to the outbox's name for its ordering counter table. */
  public static final String KEY_TABLE_SUFFIX = "_key";
  /** Appended to the outbox's name for its index of pending events. */
  public static final String PENDING_INDEX_SUFFIX = "_pending";
  /** Room for the longer suffix within the 63 characters every supported database allows for a name. */
  private static final int MAX_NAME = 63 - PENDING_INDEX_SUFFIX.length();

  public SqlOutbox {
    Objects.requireNonNull(table, "table");
    if (table.name().length() > MAX_NAME) {
      throw new IllegalArgumentException("outbox table name '" + table.name() + "' is too long: at most " + MAX_NAME
          + " characters, so that its counter table " + table.name() + KEY_TABLE_SUFFIX + " and index fit");
    }
    new SqlFence(table, lock, false, false); // validates the lock name
  }

  /** The table-mode, strict fence that guards the outbox's inserts. */
  public SqlFence fence() {
    return new SqlFence(table, lock, false, false);
  }

  public SqlOutbox withTable(TableName other) {
    return new SqlOutbox(other, lock);
  }

  /** The ordering counter table, beside the outbox (the suffix in the case of the name: H2 stores upper case). */
  public TableName keyTable() {
    return new TableName(table.schema(), table.name() + suffix(KEY_TABLE_SUFFIX));
  }

  /** The index of pending events. */
  public String pendingIndex() {
    return table.name() + suffix(PENDING_INDEX_SUFFIX);
  }

  private String suffix(String suffix) {
    String name = table.name();
    return name.equals(name.toUpperCase(Locale.ROOT)) && !name.equals(name.toLowerCase(Locale.ROOT))
        ? suffix.toUpperCase(Locale.ROOT) : suffix;
  }

  /**
   * The PostgreSQL NOTIFY channel a commit that wrote events wakes the relays on: the outbox's name as the database
   * stores it, unqualified ({@code LISTEN outbox}).
   */
  public String notifyChannel() {
    return table.name();
  }
}
