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

/** What the two databases hold at the end: ledger entries, reservations (each with its token), balances, stock. */
record DatabaseState(List<Row> ledger, List<Row> reservations, Map<Integer, Long> balances, long stockReserved) {

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
      return new DatabaseState(ledger, reservations, balances, reserved);
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
