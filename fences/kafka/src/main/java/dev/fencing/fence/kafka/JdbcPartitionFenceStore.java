package dev.fencing.fence.kafka;

import dev.fencing.fence.store.FenceStoreException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * {@link PartitionFenceStore} in the table {@value #TABLE}, next to the SQL fence's {@code fencing_fence} (which this
 * fence no longer reads or writes: its per-lock token would refuse a valid holder's records on another partition). One
 * row per advance; created on first use when missing ({@link #ddl}). Plain autocommit statements: an advance is one
 * {@code INSERT}, made atomic by the primary key (a second consumer judging the same record gets a duplicate key and
 * reads the row the first one stored). The first copies of outbox events ({@code fencing.fence.outbox=dedupe}) are
 * kept the same way in {@value #EVENTS}, one row per event. Tested on PostgreSQL and H2; the SQL is portable
 * (MariaDB/MySQL too).
 */
final class JdbcPartitionFenceStore implements PartitionFenceStore {

  static final String TABLE = "fencing_kafka_fence";
  /** The first copy of each outbox event ({@code fencing.fence.outbox=dedupe}). */
  static final String EVENTS = "fencing_kafka_event";
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  private final DataSource dataSource;
  private final String table;
  private final String events;
  private volatile boolean ensured;
  private volatile boolean eventsEnsured;

  JdbcPartitionFenceStore(DataSource dataSource, String schema) {
    if (schema != null && !IDENTIFIER.matcher(schema).matches()) {
      throw new IllegalArgumentException("invalid schema '" + schema + "': expected an identifier "
          + "[A-Za-z_][A-Za-z0-9_]* of at most 63 characters");
    }
    this.dataSource = dataSource;
    this.table = schema == null ? TABLE : schema + "." + TABLE;
    this.events = schema == null ? EVENTS : schema + "." + EVENTS;
  }

  /** The events table's DDL (also in README.md). */
  static String eventsDdl(String table) {
    return "CREATE TABLE " + table + " (lock_name varchar(128) NOT NULL, event_id varchar(64) NOT NULL, "
        + "topic varchar(249) NOT NULL, partition_id integer NOT NULL, record_offset bigint NOT NULL, "
        + "seen_at timestamp, PRIMARY KEY (lock_name, event_id))";
  }

  /** The table's DDL (also in README.md). */
  static String ddl(String table) {
    return "CREATE TABLE " + table + " (lock_name varchar(128) NOT NULL, topic varchar(249) NOT NULL, "
        + "partition_id integer NOT NULL, from_offset bigint NOT NULL, token bigint NOT NULL, grant_id varchar(64), "
        + "updated_at timestamp, PRIMARY KEY (lock_name, topic, partition_id, from_offset))";
  }

  private static final String KEY = " WHERE lock_name = ? AND topic = ? AND partition_id = ?";

  @Override
  public List<Advance> advances(String lock, String topic, int partition, long from, long to) {
    try (Connection c = dataSource.getConnection()) {
      ensure(c);
      List<Advance> out = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement("SELECT from_offset, token, grant_id FROM " + table + KEY
          + " AND from_offset <= ? AND from_offset >= COALESCE((SELECT MAX(from_offset) FROM " + table + KEY
          + " AND from_offset <= ?), -1) ORDER BY from_offset")) {
        key(ps, 1, lock, topic, partition);
        ps.setLong(4, to);
        key(ps, 5, lock, topic, partition);
        ps.setLong(8, from);
        read(ps, out);
      }
      if (out.isEmpty()) {
        // Nothing at or before `to`: the partition's oldest advance, if any, judges records older than it.
        try (PreparedStatement ps = c.prepareStatement("SELECT from_offset, token, grant_id FROM " + table + KEY
            + " AND from_offset = (SELECT MIN(from_offset) FROM " + table + KEY + ")")) {
          key(ps, 1, lock, topic, partition);
          key(ps, 4, lock, topic, partition);
          read(ps, out);
        }
      }
      end(c);
      return out;
    } catch (SQLException e) {
      ensured = false; // checked again: the table may have been dropped
      throw new FenceStoreException("fencing: the JDBC fence store failed to read the fence of lock '" + lock
          + "' on " + topic + "-" + partition + " in " + table + ": " + e.getMessage(), e);
    }
  }

  @Override
  public Advance record(String lock, String topic, int partition, Advance advance) {
    try (Connection c = dataSource.getConnection()) {
      ensure(c);
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " (lock_name, topic, partition_id, "
          + "from_offset, token, grant_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, LOCALTIMESTAMP)")) {
        key(ps, 1, lock, topic, partition);
        ps.setLong(4, advance.offset());
        ps.setLong(5, advance.token());
        ps.setString(6, advance.grant());
        ps.executeUpdate();
        end(c);
        return advance;
      } catch (SQLException e) {
        if (e.getSQLState() == null || !e.getSQLState().startsWith("23")) {
          throw e;
        }
        rollback(c);
      }
      // Another consumer stored the advance of this record first: its row is the verdict.
      try (PreparedStatement ps = c.prepareStatement("SELECT from_offset, token, grant_id FROM " + table + KEY
          + " AND from_offset = ?")) {
        key(ps, 1, lock, topic, partition);
        ps.setLong(4, advance.offset());
        List<Advance> out = new ArrayList<>(1);
        read(ps, out);
        end(c);
        if (out.isEmpty()) {
          throw new SQLException("the advance at offset " + advance.offset() + " collided with a key and is gone");
        }
        return out.get(0);
      }
    } catch (SQLException e) {
      ensured = false;
      throw new FenceStoreException("fencing: the JDBC fence store failed to store token " + advance.token()
          + " of lock '" + lock + "' at " + topic + "-" + partition + "@" + advance.offset() + " in " + table + ": "
          + e.getMessage(), e);
    }
  }

  @Override
  public Position firstCopy(String lock, String eventId, Position here) {
    try (Connection c = dataSource.getConnection()) {
      if (!eventsEnsured) {
        create(c, events, eventsDdl(events), "record_offset");
        eventsEnsured = true;
      }
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + events + " (lock_name, event_id, topic, "
          + "partition_id, record_offset, seen_at) VALUES (?, ?, ?, ?, ?, LOCALTIMESTAMP)")) {
        ps.setString(1, lock);
        ps.setString(2, eventId);
        ps.setString(3, here.topic());
        ps.setInt(4, here.partition());
        ps.setLong(5, here.offset());
        ps.executeUpdate();
        end(c);
        return here;
      } catch (SQLException e) {
        if (e.getSQLState() == null || !e.getSQLState().startsWith("23")) {
          throw e;
        }
        rollback(c);
      }
      // The event's first copy is stored (this record read again, or an earlier copy): that row is the answer.
      try (PreparedStatement ps = c.prepareStatement("SELECT topic, partition_id, record_offset FROM " + events
          + " WHERE lock_name = ? AND event_id = ?")) {
        ps.setString(1, lock);
        ps.setString(2, eventId);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            throw new SQLException("the first copy of event '" + eventId + "' collided with a key and is gone");
          }
          Position first = new Position(rs.getString(1), rs.getInt(2), rs.getLong(3));
          end(c);
          return first;
        }
      }
    } catch (SQLException e) {
      eventsEnsured = false;
      throw new FenceStoreException("fencing: the JDBC fence store failed to look up outbox event '" + eventId
          + "' of lock '" + lock + "' in " + events + ": " + e.getMessage(), e);
    }
  }

  /** Creates the table when it is missing (once per store; again after a failure). */
  private void ensure(Connection c) throws SQLException {
    if (ensured) {
      return;
    }
    create(c, table, ddl(table), "from_offset");
    ensured = true;
  }

  private static void create(Connection c, String table, String ddl, String column) throws SQLException {
    boolean exists;
    try (Statement st = c.createStatement()) {
      st.executeQuery("SELECT " + column + " FROM " + table + " WHERE 1 = 0").close();
      exists = true;
    } catch (SQLException e) {
      rollback(c);
      exists = false;
    }
    if (!exists) {
      try (Statement st = c.createStatement()) {
        st.execute(ddl);
        end(c);
      } catch (SQLException e) {
        rollback(c);
        // Another consumer may have created it meanwhile.
        try (Statement st = c.createStatement()) {
          st.executeQuery("SELECT " + column + " FROM " + table + " WHERE 1 = 0").close();
        } catch (SQLException again) {
          rollback(c);
          throw new SQLException("the Kafka fence's table " + table + " is missing and could not be created ("
              + e.getMessage() + "); create it with: " + ddl, e.getSQLState(), e);
        }
      }
    }
  }

  private static void key(PreparedStatement ps, int i, String lock, String topic, int partition) throws SQLException {
    ps.setString(i, lock);
    ps.setString(i + 1, topic);
    ps.setInt(i + 2, partition);
  }

  private static void read(PreparedStatement ps, List<Advance> out) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(new Advance(rs.getLong(1), rs.getLong(2), rs.getString(3)));
      }
    }
  }

  /** Ends a connection's transaction when it is not in autocommit (a pool's connection may not be). */
  private static void end(Connection c) throws SQLException {
    if (!c.getAutoCommit()) {
      c.commit();
    }
  }

  private static void rollback(Connection c) {
    try {
      if (!c.getAutoCommit()) {
        c.rollback();
      }
    } catch (SQLException ignored) {
      // the connection is broken: the caller's next statement reports it
    }
  }
}
