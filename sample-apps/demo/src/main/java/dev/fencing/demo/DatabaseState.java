package dev.fencing.demo;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the two databases hold at the end: ledger entries, reservations (each with its token), balances, stock, and
 * the outbox's events.
 */
record DatabaseState(List<Row> ledger, List<Row> reservations, Map<Integer, Long> balances, long stockReserved,
    List<OutboxRow> outbox) {

  private static final Pattern FORM = Pattern.compile("worker=([^&]+)&transfer=(\\d+)");

  /** One outbox event: its id, the worker and transfer its payload names, the token it carries, its state. */
  record OutboxRow(String eventId, String worker, long transfer, long token, String state) {}

  /** A ledger entry or a reservation, in insertion order ({@code id}), with the token the fence stamped on it. */
  record Row(long id, String worker, long transfer, int from, int to, int amount, long token) {}

  static DatabaseState read(Infrastructure infra) {
    try (Connection bank = DriverManager.getConnection(infra.bankUrl());
        Connection inventory = DriverManager.getConnection(infra.inventoryUrl())) {
      List<Row> ledger = rows(bank, "SELECT id, worker, transfer, from_account, to_account, amount, fencing_token"
          + " FROM ledger_entry ORDER BY id");
      List<Row> reservations = rows(inventory, "SELECT id, worker, transfer, 0, 0, amount, fencing_token"
          + " FROM reservation ORDER BY id");
      Map<Integer, Long> balances = new TreeMap<>();
      try (Statement s = bank.createStatement(); ResultSet rs = s.executeQuery("SELECT id, balance FROM account")) {
        while (rs.next()) {
          balances.put(rs.getInt(1), rs.getLong(2));
        }
      }
      long reserved;
      try (Statement s = inventory.createStatement();
          ResultSet rs = s.executeQuery("SELECT reserved FROM stock WHERE sku = 'gold'")) {
        rs.next();
        reserved = rs.getLong(1);
      }
      List<OutboxRow> outbox = new ArrayList<>();
      try (Statement s = bank.createStatement(); ResultSet rs = s.executeQuery("SELECT event_id, payload, token,"
          + " state FROM " + Infrastructure.OUTBOX + " ORDER BY key_seq")) {
        while (rs.next()) {
          Matcher m = FORM.matcher(rs.getString(2) == null ? "" : rs.getString(2));
          boolean found = m.find();
          outbox.add(new OutboxRow(rs.getString(1), found ? m.group(1) : null, found ? Long.parseLong(m.group(2)) : -1,
              rs.getLong(3), rs.getString(4)));
        }
      }
      return new DatabaseState(ledger, reservations, balances, reserved, outbox);
    } catch (SQLException e) {
      throw new StoryBroken("cannot read the end state from PostgreSQL: " + e.getMessage(), e);
    }
  }

  private static List<Row> rows(Connection c, String sql) throws SQLException {
    List<Row> rows = new ArrayList<>();
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        rows.add(new Row(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getInt(4), rs.getInt(5), rs.getInt(6),
            rs.getLong(7)));
      }
    }
    return rows;
  }
}
