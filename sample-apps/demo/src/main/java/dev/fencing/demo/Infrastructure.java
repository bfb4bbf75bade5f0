package dev.fencing.demo;

import dev.fencing.fence.sql.OutboxInstaller;
import dev.fencing.fence.sql.SqlFence;
import dev.fencing.fence.sql.SqlFenceInstaller;
import dev.fencing.fence.sql.SqlOutbox;
import dev.fencing.fence.sql.TableName;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.KafkaBroker;
import dev.fencing.testing.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The real servers the story runs on, all on free loopback ports with temporary directories: one etcd node, one
 * PostgreSQL 15 (two databases: {@code bank} for the workers, {@code inventory} for the service) and one Kafka broker
 * (KRaft, in a child JVM). The schema and the SQL fences are installed here, by the operator, as a DBA would: the
 * apps contain no fencing code for their databases.
 */
final class Infrastructure {
  static final String LOCK = "ledger";
  static final String TOPIC = "transfers";
  /** The tokened outbox in the bank database, for lock {@link #LOCK}. */
  static final String OUTBOX = "outbox";
  static final int ACCOUNTS = 10;
  static final long OPENING_BALANCE = 1_000;

  final EtcdCluster etcd;
  final PostgresServer postgres;
  final KafkaBroker kafka;

  private Infrastructure(EtcdCluster etcd, PostgresServer postgres, KafkaBroker kafka) {
    this.etcd = etcd;
    this.postgres = postgres;
    this.kafka = kafka;
  }

  /** Starts the three servers side by side (Kafka takes longest); each is registered with {@code resources}. */
  static Infrastructure start(Resources resources) {
    CompletableFuture<KafkaBroker> kafka = CompletableFuture.supplyAsync(() -> resources.add(KafkaBroker.start()));
    CompletableFuture<PostgresServer> pg = CompletableFuture.supplyAsync(() -> resources.add(PostgresServer.start()));
    try {
      EtcdCluster etcd = resources.add(EtcdCluster.single());
      return new Infrastructure(etcd, pg.join(), kafka.join());
    } catch (CompletionException e) {
      // The other futures still finish and register what they started, so the caller's close stops it.
      CompletableFuture.allOf(kafka, pg).exceptionally(x -> null).join();
      throw e.getCause() instanceof RuntimeException r ? r : e;
    } catch (RuntimeException e) {
      CompletableFuture.allOf(kafka, pg).exceptionally(x -> null).join();
      throw e;
    }
  }

  /** etcd's client URL(s), in the form the agent's comma-separated arguments accept. */
  String etcdEndpoints() {
    return etcd.endpoints().replace(',', ';');
  }

  String bankUrl() {
    return postgres.jdbcUrl("bank") + "&socketTimeout=30";
  }

  String inventoryUrl() {
    return postgres.jdbcUrl("inventory") + "&socketTimeout=30";
  }

  /**
   * Creates both databases, their tables and fences, and the topic.
   * <ul>
   *   <li>{@code bank.account}: table mode — every write of a token below the lock's highest fails with FN001;</li>
   *   <li>{@code bank.ledger_entry}: per-row mode — each row keeps the token it was written with (the transfer's
   *       account updates, in the same transaction, are what rejects a stale writer);</li>
   *   <li>{@code bank.outbox}: a tokened outbox for the lock ({@code sql install --outbox outbox --lock ledger}),
   *       fenced like a table-mode table; the workers write their webhook notifications into it;</li>
   *   <li>{@code inventory.stock} (table mode) and {@code inventory.reservation} (per-row), the same way.</li>
   * </ul>
   */
  void prepare() {
    try (Connection admin = DriverManager.getConnection(postgres.jdbcUrl()); Statement s = admin.createStatement()) {
      s.execute("CREATE DATABASE bank");
      s.execute("CREATE DATABASE inventory");
    } catch (SQLException e) {
      throw new StoryBroken("cannot create the databases: " + e.getMessage(), e);
    }
    try (Connection c = DriverManager.getConnection(bankUrl()); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE account (id int PRIMARY KEY, balance bigint NOT NULL)");
      s.execute("INSERT INTO account SELECT g, " + OPENING_BALANCE + " FROM generate_series(1, " + ACCOUNTS + ") g");
      s.execute("CREATE TABLE ledger_entry (id bigserial PRIMARY KEY, worker text NOT NULL, transfer bigint NOT NULL,"
          + " from_account int NOT NULL, to_account int NOT NULL, amount int NOT NULL)");
      SqlFenceInstaller installer = new SqlFenceInstaller(c);
      installer.install(new SqlFence(TableName.parse("account"), LOCK, false, false));
      installer.install(new SqlFence(TableName.parse("ledger_entry"), LOCK, true, false));
      new OutboxInstaller(c).install(new SqlOutbox(TableName.parse(OUTBOX), LOCK));
    } catch (SQLException e) {
      throw new StoryBroken("cannot prepare the bank database: " + e.getMessage(), e);
    }
    try (Connection c = DriverManager.getConnection(inventoryUrl()); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE stock (sku text PRIMARY KEY, reserved bigint NOT NULL)");
      s.execute("INSERT INTO stock VALUES ('gold', 0)");
      s.execute("CREATE TABLE reservation (id bigserial PRIMARY KEY, worker text NOT NULL, transfer bigint NOT NULL,"
          + " amount int NOT NULL)");
      SqlFenceInstaller installer = new SqlFenceInstaller(c);
      installer.install(new SqlFence(TableName.parse("stock"), LOCK, false, false));
      installer.install(new SqlFence(TableName.parse("reservation"), LOCK, true, false));
    } catch (SQLException e) {
      throw new StoryBroken("cannot prepare the inventory database: " + e.getMessage(), e);
    }
    kafka.createTopic(TOPIC, 1);
  }
}
