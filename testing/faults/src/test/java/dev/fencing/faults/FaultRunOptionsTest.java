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
}
