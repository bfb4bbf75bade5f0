package dev.fencing.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Every dialect's file has every statement the relay runs, with the table and id list put in. */
class OutboxDialectTest {
  private static final List<String> NAMES = List.of("candidates", "candidates-all", "claim", "delivered", "failed",
      "pending", "parked");

  @Test
  void everyDialectHasEveryStatement() {
    for (OutboxDialect d : OutboxDialect.values()) {
      for (String name : NAMES) {
        String sql = d.sql(name, "shop.outbox", 3);
        assertThat(sql).as(d + " " + name).contains("shop.outbox").doesNotContain("{table}")
            .doesNotContain("{ids}").doesNotEndWith(";").doesNotContain("-- ");
      }
      assertThat(d.sql("candidates", "t")).contains("LIMIT ?").endsWith("SKIP LOCKED");
      assertThat(d.sql("candidates-all", "t")).contains("LIMIT ?").endsWith("SKIP LOCKED");
      assertThat(d.sql("delivered", "t", 3)).contains("IN (?, ?, ?)");
    }
  }

  @Test
  void aNameCanStandForAStatementDeclaredBeforeIt() {
    java.util.Map<String, String> parsed = OutboxDialect.parse(
        "-- name: a\n-- a comment\nSELECT 1\n  FROM t;\n\n-- name: b = a\n-- the same\n\n-- name: c\nSELECT 2;\n");
    assertThat(parsed).containsEntry("a", "SELECT 1\n  FROM t").containsEntry("b", "SELECT 1\n  FROM t")
        .containsEntry("c", "SELECT 2").hasSize(3);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> OutboxDialect.parse("-- name: b = a\n"))
        .hasMessageContaining("not declared before it");
  }

  @Test
  void backoffDoublesUpToTheCap() throws Exception {
    OutboxRelay relay = OutboxRelay.builder(() -> null, "outbox").backoff(java.time.Duration.ofSeconds(1))
        .backoffCap(java.time.Duration.ofSeconds(10)).build();
    assertThat(List.of(1, 2, 3, 4, 5, 60).stream().map(relay::backoff).toList())
        .containsExactly(1000L, 2000L, 4000L, 8000L, 10_000L, 10_000L);
  }
}
