package dev.fencing.agent.instrumentation.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Decision;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The grants a transaction's records toward unfenced topics were tagged under, re-judged at its commit. */
class TransactionGrantsTest {
  private final Decision first = Decision.tag("orders", 4, null, "a1");
  private final Decision later = Decision.tag("orders", 9, null, "b2");
  private final List<Decision> asked = new ArrayList<>();
  private Decision blocking;
  private final TransactionGrants grants = new TransactionGrants(d -> {
    asked.add(d);
    return d == first ? blocking : null;
  });

  @Test
  void aCommitIsJudgedByEachDistinctGrantOfItsTransactionOnce() {
    Object producer = new Object();
    assertThat(grants.check(producer)).as("nothing sent").isNull();
    grants.begins(producer);
    grants.sent(producer, first);
    grants.sent(producer, first);
    grants.sent(producer, later);
    assertThat(grants.check(producer)).isNull();
    assertThat(asked).containsExactly(first, later);

    blocking = Decision.block("orders", 4, BlockReason.EXPIRED);
    assertThat(grants.check(producer)).isSameAs(blocking);
  }

  @Test
  void aNewTransactionStartsWithNoGrantsAndProducersAreApart() {
    Object producer = new Object();
    Object other = new Object();
    blocking = Decision.block("orders", 4, BlockReason.EXPIRED);
    grants.sent(producer, first);
    grants.sent(other, later);
    assertThat(grants.check(other)).isNull();
    grants.begins(producer);
    assertThat(grants.check(producer)).as("its records were of the previous transaction").isNull();
  }
}
