package dev.fencing.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** scripts/faults.sh's arguments, {@code --pooler} among them. */
class FaultRunOptionsTest {
  private static final Path JAR = Path.of("/tmp/fencing-agent.jar");

  private static FaultRun.Options parse(String... args) {
    return FaultRun.Options.parse(args, JAR);
  }

  @Test
  void withoutPoolerTheWorkersGoStraightToPostgres() {
    FaultRun.Options o = parse("10", "--seed=7");
    assertThat(o.trials()).isEqualTo(10);
    assertThat(o.seed()).isEqualTo(7);
    assertThat(o.workers()).isEqualTo(3);
    assertThat(o.pooler()).isFalse();
    assertThat(o.poolSize()).isZero();
    assertThat(o.poolerLabel()).isEqualTo("pooler=none");
  }

  @Test
  void poolerAloneMeansPgBouncerInTransactionModeWithTwoServerConnections() {
    FaultRun.Options o = parse("10", "--pooler", "--seed=7");
    assertThat(o.pooler()).isTrue();
    assertThat(o.poolSize()).isEqualTo(2);
    assertThat(o.poolerLabel()).isEqualTo("pooler=pgbouncer-transaction pool_size=2");
  }

  @Test
  void thePoolSizeCanBeGiven() {
    assertThat(parse("--pooler=1").poolSize()).isEqualTo(1);
    assertThat(parse("--pooler=1").poolerLabel()).isEqualTo("pooler=pgbouncer-transaction pool_size=1");
    assertThat(parse("--pooler=3", "--workers=2").poolSize()).isEqualTo(3);
  }

  @Test
  void aBadPoolSizeIsRefusedWithTheUsage() {
    assertThatThrownBy(() -> parse("--pooler=0")).hasMessageContaining("at least 1 server connection")
        .hasMessageContaining("--pooler[=POOL_SIZE]");
    assertThatThrownBy(() -> parse("--pooler=two")).hasMessageContaining("unknown argument '--pooler=two'");
    assertThatThrownBy(() -> parse("--pool")).hasMessageContaining("unknown argument '--pool'");
  }
  @Test
  void byDefaultEtcdOneLockAndThreePartitions() {
    Topology t = parse("10").topology();
    assertThat(t.coordinator()).isEqualTo(Topology.Coordinator.ETCD);
    assertThat(t.locks()).isEqualTo(1);
    assertThat(t.partitions()).isEqualTo(3);
    assertThat(t.lockNames()).containsExactly("faults");
    assertThat(t.sections()).isFalse();
    assertThat(t.table("pg_write", 1)).isEqualTo("pg_write");
    assertThat(t.ttlMs()).isEqualTo(2_000);
    assertThat(t.suffix()).isEmpty();
    assertThat(t.label("etcd-restart")).isEqualTo("etcd-restart");
  }

  @Test
  void severalLocksAreSectionsWithTheirOwnTables() {
    Topology t = parse("--locks=2", "--partitions=3", "--seed=7").topology();
    assertThat(t.locks()).isEqualTo(2);
    assertThat(t.sections()).isTrue();
    assertThat(t.lockNames()).containsExactly("faults-1", "faults-2");
    assertThat(t.table("pg_write", 2)).isEqualTo("pg_write_2");
    assertThat(t.suffix()).isEqualTo(" locks=2");
    assertThat(FaultSections.declaration(t.lockNames())).isEqualTo("dev.fencing.faults.FaultSections#lock1@faults-1,"
        + "dev.fencing.faults.FaultSections#lock2@faults-2");
  }

  @Test
  void zookeeperRenamesTheCoordinatorFaultsAndUsesALongerSession() {
    Topology t = parse("--coordinator=zookeeper", "--partitions=1").topology();
    assertThat(t.coordinator()).isEqualTo(Topology.Coordinator.ZOOKEEPER);
    assertThat(t.ttlMs()).isEqualTo(3_000);
    assertThat(t.label("etcd-wipe")).isEqualTo("zk-wipe");
    assertThat(t.label("leader-kill")).isEqualTo("leader-kill");
    assertThat(t.suffix()).isEqualTo(" coordinator=zookeeper partitions=1");
    assertThat(parse("--coordinator=etcd").topology()).isEqualTo(Topology.DEFAULT);
  }

  @Test
  void badTopologiesAreRefusedNamingTheOption() {
    assertThatThrownBy(() -> parse("--coordinator=consul")).hasMessage("--coordinator must be etcd or zookeeper, not"
        + " 'consul'");
    assertThatThrownBy(() -> parse("--locks=0")).hasMessage("--locks must be 1 to 4, not 0");
    assertThatThrownBy(() -> parse("--locks=5")).hasMessage("--locks must be 1 to 4, not 5");
    assertThatThrownBy(() -> parse("--locks=two")).hasMessage("--locks=N needs a whole number, not 'two'");
    assertThatThrownBy(() -> parse("--partitions=0")).hasMessage("--partitions must be 1 to 64, not 0");
    assertThatThrownBy(() -> parse("--partitions")).hasMessageContaining("unknown argument '--partitions'")
        .hasMessageContaining("[--coordinator=etcd|zookeeper] [--locks=N] [--partitions=N]");
  }

  @Test
  void theWorkModesPickTheCoordinatorTheirLockLivesIn() {
    assertThat(parse("10").topology().work()).isEqualTo(Topology.Work.JVM);
    Topology section = parse("--work=section").topology();
    assertThat(section.work()).isEqualTo(Topology.Work.SECTION);
    assertThat(section.sections()).isTrue();
    assertThat(section.lockNames()).containsExactly("faults");
    assertThat(section.suffix()).isEqualTo(" work=section");
    assertThat(parse("--work=section", "--coordinator=zookeeper").topology().coordinator())
        .isEqualTo(Topology.Coordinator.ZOOKEEPER);
    Topology curator = parse("--work=curator").topology();
    assertThat(curator.coordinator()).isEqualTo(Topology.Coordinator.ZOOKEEPER);
    assertThat(curator.work().captured()).isTrue();
    assertThat(curator.sections()).isFalse();
    assertThat(curator.suffix()).isEqualTo(" coordinator=zookeeper work=curator");
    assertThat(parse("--coordinator=zookeeper", "--work=leader").topology().work()).isEqualTo(Topology.Work.LEADER);
    assertThat(parse("--work=jetcd").topology().coordinator()).isEqualTo(Topology.Coordinator.ETCD);
  }

  @Test
  void aWorkModeAgainstItsLocksCoordinatorOrWithSeveralLocksIsRefused() {
    assertThatThrownBy(() -> parse("--work=curator", "--coordinator=etcd")).hasMessage("--work=curator takes its"
        + " lock in zookeeper, not --coordinator=etcd");
    assertThatThrownBy(() -> parse("--coordinator=zookeeper", "--work=jetcd")).hasMessage("--work=jetcd takes its"
        + " lock in etcd, not --coordinator=zookeeper");
    assertThatThrownBy(() -> parse("--work=section", "--locks=2")).hasMessage("--work=section runs one lock, not"
        + " --locks=2");
    assertThatThrownBy(() -> parse("--work=spring")).hasMessage("--work must be jvm, section, curator, jetcd,"
        + " leader or outbox, not 'spring'");
    assertThatThrownBy(() -> parse("--work=outbox", "--locks=2")).hasMessage("--work=outbox runs one lock, not"
        + " --locks=2");
  }

  @Test
  void dbChoosesTheOutboxsDatabaseAndGoesWithTheOutboxOnly() {
    assertThat(parse("--work=outbox").topology().db()).isEqualTo(Topology.Db.POSTGRESQL);
    Topology maria = parse("--db=mariadb", "--work=outbox").topology();
    assertThat(maria.db()).isEqualTo(Topology.Db.MARIADB);
    assertThat(maria.suffix()).isEqualTo(" work=outbox db=mariadb");
    assertThatThrownBy(() -> parse("--db=mariadb")).hasMessageStartingWith("--db=mariadb chooses the outbox's"
        + " database: it goes with --work=outbox");
    assertThatThrownBy(() -> parse("--work=outbox", "--db=mysql")).hasMessage("--db must be postgresql or mariadb,"
        + " not 'mysql'");
  }
}
