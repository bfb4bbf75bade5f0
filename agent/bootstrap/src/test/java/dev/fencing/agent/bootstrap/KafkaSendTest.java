package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What the Kafka producer advice takes from the bootstrap part, with a recording gate in place of the core. */
class KafkaSendTest {
  private final List<Throwable> hookFailures = new ArrayList<>();

  @AfterEach
  void uninstall() {
    Fencing.installKafka(KafkaHook.NOOP);
    Fencing.installFallback(Decision.block("(unknown)", 0, BlockReason.AGENT_FAILED));
  }

  private void installGate() {
    Fencing.install(new SideEffectGate() {
      @Override
      public Decision decide(Channel channel, boolean write, boolean fenced) {
        return Decision.pass("orders");
      }

      @Override
      public Decision hookFailed(Channel channel, boolean write, Throwable error) {
        hookFailures.add(error);
        return Decision.pass("orders");
      }
    });
  }

  @Test
  void aFailingHookIsCountedAndTheRecordGoesOnUntagged() {
    installGate();
    IllegalStateException agentError = new IllegalStateException("broken");
    Fencing.installKafka(topic -> {
      throw agentError;
    });

    assertThat(KafkaSend.decide("orders")).isNull();
    assertThat(hookFailures).containsExactly(agentError);
  }

  @Test
  void theHooksDecisionIsPassedOn() {
    Decision tag = Decision.tag("orders", 7);
    Fencing.installKafka(topic -> tag);

    assertThat(KafkaSend.decide("orders")).isSameAs(tag);
  }

  @Test
  void aTagCarriesTokenLockAndGrantInOneValueBuiltOncePerDecision() {
    Decision full = Decision.tag("orders", 42, "c2ln", "1a2b");
    Decision bare = Decision.tag("orders", 42);

    assertThat(KafkaHook.HEADER).isEqualTo("fencing");
    assertThat(full.kafkaValue()).isEqualTo("42;orders;1a2b".getBytes(StandardCharsets.US_ASCII));
    assertThat(full.kafkaValue()).as("built once, not per record").isSameAs(full.kafkaValue());
    assertThat(full.kafkaSignature()).isEqualTo("c2ln".getBytes(StandardCharsets.US_ASCII));
    assertThat(bare.kafkaValue()).isEqualTo("42;orders".getBytes(StandardCharsets.US_ASCII));
    assertThat(bare.kafkaSignature()).isNull();
    assertThat(Decision.pass("orders").kafkaValue()).isNull();
    assertThat(Decision.block("orders", 42, BlockReason.EXPIRED).kafkaValue()).isNull();
    assertThat(Decision.tag("orders;x", 42).kafkaValue()).as("not a lock name: the header cannot carry it").isNull();
  }

  @Test
  void theBlocksMessageAndCauseNameLockTokenAndReason() {
    Decision block = Decision.block("orders", 7, BlockReason.EXPIRED);

    assertThat(KafkaSend.message(block)).startsWith("Fencing Agent blocked a kafka side effect: lock 'orders', token 7");
    assertThat(KafkaSend.cause(block).decision()).isSameAs(block);
    assertThat(KafkaSend.cause(block)).hasMessage(KafkaSend.message(block));
  }

  /** Stands in for kafka-clients' TransactionManager: the one public method the advice needs. */
  public static final class Transactions {
    final List<RuntimeException> errors = new ArrayList<>();

    public void maybeTransitionToErrorState(RuntimeException error) {
      errors.add(error);
      if (errors.size() > 1) {
        throw new IllegalStateException("already failing");
      }
    }
  }

  @Test
  void aTransactionTurnsAbortableOnceAndAFailingTransitionNeverReachesTheCaller() {
    installGate();
    Transactions transactions = new Transactions();
    RuntimeException error = new RuntimeException("blocked");

    KafkaSend.abortable(transactions, error);
    KafkaSend.abortable(transactions, error); // the stand-in throws now, as Kafka does for a transaction failing
    KafkaSend.abortable(null, error); // not a transactional producer

    assertThat(transactions.errors).containsExactly(error, error);
    assertThat(hookFailures).isEmpty();
  }

  @Test
  void aTransactionManagerWithoutTheMethodIsReportedNotThrown() {
    installGate();

    KafkaSend.abortable("not a transaction manager", new RuntimeException("blocked"));

    assertThat(hookFailures).singleElement().asString().contains("maybeTransitionToErrorState");
  }
}
