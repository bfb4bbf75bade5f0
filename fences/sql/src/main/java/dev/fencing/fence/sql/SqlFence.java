package dev.fencing.fence.sql;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What to install on one protected table: the lock whose tokens it accepts, per-row mode (a token column on each row
 * instead of the table-wide fence row) and permissive mode (a write without a token passes).
 */
public record SqlFence(TableName table, String lock, boolean perRow, boolean permissive) {

  /** The agent's own rule for lock names (fencing.lock): it keeps them safe inside SQL literals and trigger names. */
  private static final Pattern LOCK_NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");

  public SqlFence {
    Objects.requireNonNull(table, "table");
    if (lock == null || !LOCK_NAME.matcher(lock).matches()) {
      throw new IllegalArgumentException("invalid lock name '" + lock
          + "': expected 1 to 128 characters of A-Z a-z 0-9 . _ - (as for fencing.lock)");
    }
  }

  public SqlFence withTable(TableName other) {
    return new SqlFence(other, lock, perRow, permissive);
  }

  /** "table mode, strict" and the like, for messages. */
  public String describe() {
    return (perRow ? "per-row" : "table") + " mode, " + (permissive ? "permissive" : "strict");
  }
}
